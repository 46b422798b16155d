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
