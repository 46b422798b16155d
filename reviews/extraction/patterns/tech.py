"""Databases and the rest of a stack, by the names people write them in any language:
what a project "uses" is looked up here (lower case key → the name as stored)."""
DATABASES = {
    "mysql": "MySQL", "postgresql": "PostgreSQL", "postgres": "PostgreSQL", "sqlite": "SQLite",
    "mongodb": "MongoDB", "mongo": "MongoDB", "mariadb": "MariaDB", "oracle": "Oracle",
    "sql server": "SQL Server", "cockroachdb": "CockroachDB", "tidb": "TiDB", "clickhouse": "ClickHouse",
    "cassandra": "Cassandra", "dynamodb": "DynamoDB", "milvus": "Milvus", "chroma": "Chroma",
    "chromadb": "Chroma", "qdrant": "Qdrant", "pinecone": "Pinecone", "weaviate": "Weaviate",
    "elasticsearch": "Elasticsearch", "opensearch": "OpenSearch", "snowflake": "Snowflake",
    "bigquery": "BigQuery", "neo4j": "Neo4j", "oceanbase": "OceanBase", "duckdb": "DuckDB",
    "pgvector": "pgvector", "supabase": "Supabase",
}
STACK = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "spring boot": "Spring Boot",
    "spring": "Spring", "rails": "Rails", "laravel": "Laravel", "express": "Express",
    "node.js": "Node.js", "nodejs": "Node.js", "next.js": "Next.js", "react": "React", "vue": "Vue",
    "angular": "Angular", "svelte": "Svelte", "kubernetes": "Kubernetes", "k8s": "Kubernetes",
    "docker": "Docker", "celery": "Celery", "kafka": "Kafka", "rabbitmq": "RabbitMQ", "redis": "Redis",
    "memcached": "Memcached", "nginx": "Nginx", "graphql": "GraphQL", "langchain": "LangChain",
    "langgraph": "LangGraph", "pytorch": "PyTorch", "tensorflow": "TensorFlow", "golang": "Go",
    "rust": "Rust", "java": "Java", "typescript": "TypeScript", "kotlin": "Kotlin",
    "terraform": "Terraform", "airflow": "Airflow", "spark": "Spark", "flink": "Flink",
    "htmx": "htmx", "sqlalchemy": "SQLAlchemy", "gunicorn": "Gunicorn",
}

# More databases and frameworks, kept as data (each entry is checked reachable by
# tests/extraction/test_vocabulary.py): what a project says it runs on, stores its data in
# or is built with. Programming languages come from the language names Pygments ships
# (``reviews/extraction/vocabulary.py``); the few it spells otherwise are listed here.
MORE_DATABASES = {
    "scylladb": "ScyllaDB", "scylla": "ScyllaDB", "surrealdb": "SurrealDB", "yugabytedb": "YugabyteDB",
    "timescaledb": "TimescaleDB", "influxdb": "InfluxDB", "couchbase": "Couchbase", "couchdb": "CouchDB",
    "rethinkdb": "RethinkDB", "arangodb": "ArangoDB", "memgraph": "Memgraph", "lancedb": "LanceDB",
    "valkey": "Valkey", "questdb": "QuestDB", "dgraph": "Dgraph", "firebird": "Firebird",
    "foundationdb": "FoundationDB", "faunadb": "FaunaDB", "fauna": "FaunaDB", "firestore": "Firestore",
    "cosmos db": "Cosmos DB", "cosmosdb": "Cosmos DB", "hbase": "HBase", "riak": "Riak", "neon": "Neon",
    "planetscale": "PlanetScale", "turso": "Turso", "libsql": "libSQL", "keydb": "KeyDB",
    "dragonfly": "Dragonfly", "dragonflydb": "Dragonfly", "etcd": "etcd", "tigerbeetle": "TigerBeetle",
    "vitess": "Vitess", "greenplum": "Greenplum", "vertica": "Vertica", "teradata": "Teradata",
    "db2": "Db2", "sap hana": "SAP HANA", "realm": "Realm", "objectbox": "ObjectBox", "hive": "Hive",
    "presto": "Presto", "trino": "Trino", "druid": "Druid", "apache pinot": "Apache Pinot",
    "starrocks": "StarRocks", "doris": "Doris", "polardb": "PolarDB", "gaussdb": "GaussDB", "dameng": "Dameng",
    "tdengine": "TDengine", "nebulagraph": "NebulaGraph", "tugraph": "TuGraph", "edgedb": "EdgeDB",
    "immudb": "immudb", "rocksdb": "RocksDB", "leveldb": "LevelDB", "badger": "Badger", "h2": "H2",
    "hsqldb": "HSQLDB", "derby": "Derby", "ms sql": "SQL Server", "mssql": "SQL Server", "aurora": "Aurora",
    "spanner": "Spanner", "bigtable": "Bigtable", "vespa": "Vespa", "typesense": "Typesense",
    "meilisearch": "Meilisearch", "solr": "Solr", "zilliz": "Zilliz", "marqo": "Marqo", "vald": "Vald",
}
MORE_STACK = {
    # mobile and desktop
    "flutter": "Flutter", "react native": "React Native", "swiftui": "SwiftUI", "uikit": "UIKit",
    "jetpack compose": "Jetpack Compose", "compose multiplatform": "Compose Multiplatform", "ionic": "Ionic",
    "xamarin": "Xamarin", ".net maui": ".NET MAUI", "maui": ".NET MAUI", "expo": "Expo",
    "capacitor": "Capacitor", "cordova": "Cordova", "nativescript": "NativeScript", "kotlin multiplatform":
    "Kotlin Multiplatform", "tauri": "Tauri", "electron": "Electron", "qt": "Qt", "wxwidgets": "wxWidgets",
    "gtk": "GTK", "uni-app": "uni-app", "taro": "Taro", "react": "React",
    # web, server and client
    "nestjs": "NestJS", "nest.js": "NestJS", "phoenix": "Phoenix", "remix": "Remix", "nuxt": "Nuxt",
    "nuxt.js": "Nuxt", "sveltekit": "SvelteKit", "astro": "Astro", "gin": "Gin", "echo": "Echo",
    "fiber": "Fiber", "actix": "Actix", "actix web": "Actix", "axum": "Axum", "rocket": "Rocket",
    "ktor": "Ktor", "quarkus": "Quarkus", "micronaut": "Micronaut", "symfony": "Symfony",
    "cakephp": "CakePHP", "codeigniter": "CodeIgniter", "yii": "Yii", "blazor": "Blazor",
    "asp.net": "ASP.NET", "asp.net core": "ASP.NET Core", ".net": ".NET", "dotnet": ".NET",
    "solidjs": "SolidJS", "solid": "SolidJS", "qwik": "Qwik", "preact": "Preact", "ember": "Ember",
    "ember.js": "Ember", "backbone": "Backbone", "jquery": "jQuery", "alpine.js": "Alpine.js",
    "hono": "Hono", "koa": "Koa", "hapi": "hapi", "fastify": "Fastify", "deno": "Deno", "bun": "Bun",
    "tornado": "Tornado", "sanic": "Sanic", "starlette": "Starlette", "litestar": "Litestar",
    "pyramid": "Pyramid", "streamlit": "Streamlit", "gradio": "Gradio", "dash": "Dash",
    "sinatra": "Sinatra", "hanami": "Hanami", "play framework": "Play Framework", "vert.x": "Vert.x",
    "dropwizard": "Dropwizard", "helidon": "Helidon", "javalin": "Javalin", "struts": "Struts",
    "gatsby": "Gatsby", "vite": "Vite", "webpack": "Webpack", "tailwind": "Tailwind CSS",
    "tailwind css": "Tailwind CSS", "bootstrap": "Bootstrap", "three.js": "Three.js", "unity": "Unity",
    "unreal engine": "Unreal Engine", "godot": "Godot", "spring cloud": "Spring Cloud",
    "dubbo": "Dubbo", "mybatis": "MyBatis", "hibernate": "Hibernate", "prisma": "Prisma",
    "drizzle": "Drizzle", "sequelize": "Sequelize", "typeorm": "TypeORM", "entity framework": "Entity Framework",
    "grpc": "gRPC", "trpc": "tRPC", "nats": "NATS", "pulsar": "Pulsar", "rocketmq": "RocketMQ",
    "zeromq": "ZeroMQ", "temporal": "Temporal", "dagster": "Dagster", "prefect": "Prefect", "dbt": "dbt",
    "ray": "Ray", "dask": "Dask", "polars": "Polars", "pandas": "pandas", "jax": "JAX", "keras": "Keras",
    "scikit-learn": "scikit-learn", "hugging face": "Hugging Face", "llamaindex": "LlamaIndex",
    "vllm": "vLLM", "ollama": "Ollama", "openshift": "OpenShift", "nomad": "Nomad", "ansible": "Ansible",
    "pulumi": "Pulumi", "helm": "Helm", "istio": "Istio", "envoy": "Envoy", "traefik": "Traefik",
    "caddy": "Caddy", "haproxy": "HAProxy", "prometheus": "Prometheus", "grafana": "Grafana",
    "aws lambda": "AWS Lambda", "lambda": "AWS Lambda", "cloudflare workers": "Cloudflare Workers",
    "firebase": "Firebase", "vercel": "Vercel", "netlify": "Netlify", "heroku": "Heroku",
    # languages Pygments names otherwise (``Nimrod``, ``Standard ML``) or not at all
    "nim": "Nim", "golang": "Go", "elixir": "Elixir", "zig": "Zig", "v": "V", "mojo": "Mojo",
    "c#": "C#", "f#": "F#", "c++": "C++", "objective-c": "Objective-C", "swift": "Swift", "scala": "Scala",
}
