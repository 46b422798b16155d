"""Memory Portal settings: one file, every knob from the environment (SPEC §8).

The defaults make a first run work with nothing installed: a SQLite file, tasks run
in-process, the offline rule extractor. Production sets DATABASE_URL (PostgreSQL),
CELERY_BROKER_URL (Redis), DJANGO_SECRET_KEY, DJANGO_DEBUG=0 and DJANGO_ALLOWED_HOSTS.
"""
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


class Env(environ.Env):
    """django-environ, with an empty variable (``NAME=``) read as unset: its default applies."""

    def get_value(self, var, cast=None, default=environ.Env.NOTSET, parse_default=False):
        if self.ENVIRON.get(var) == "" and default is not self.NOTSET:
            return default
        return super().get_value(var, cast=cast, default=default, parse_default=parse_default)

    def names(self, var, default: str = "") -> list[str]:
        """A comma-separated list, each item trimmed, empty items dropped."""
        return [item.strip() for item in self.str(var, default=default).split(",") if item.strip()]


# Every variable below is in docs/configuration.md's table (tests/core/test_settings.py checks).
env = Env()

DEBUG = env.bool("DJANGO_DEBUG", default=True)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or (
    # Only good enough for a first run on a developer machine; refused below otherwise.
    "insecure-dev-key-set-DJANGO_SECRET_KEY-in-production"
)
if not DEBUG and SECRET_KEY.startswith("insecure-dev-key"):
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off.")

ALLOWED_HOSTS = env.names("DJANGO_ALLOWED_HOSTS", default="127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env.names("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",
    "axes",
    "template_partials",
    "pgtrigger",
    "reviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files answer here, cacheable
    "csp.middleware.CSPMiddleware",
    "reviews.web.middleware.NoStoreMiddleware",
    "reviews.web.middleware.RequestIdMiddleware",
    "reviews.web.middleware.BodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out sign-in into its page
]

ROOT_URLCONF = "memory_portal.urls"
WSGI_APPLICATION = "memory_portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reviews.web.context_processors.vocabularies",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
DATABASES = {"default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
if env.str("DJANGO_TEST_DB_NAME", default=""):
    # Lets several test runs share one PostgreSQL server without clobbering each other.
    DATABASES["default"]["TEST"] = {"NAME": env.str("DJANGO_TEST_DB_NAME")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web process and in-process tasks share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
IS_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")
# Django's documented server-side binding (OPTIONS "server_side_binding") with psycopg's
# prepared statements (OPTIONS "prepare_threshold"): a statement a connection has run
# DATABASE_PREPARE_THRESHOLD times is prepared, so PostgreSQL stops planning it again.
# Recall's statement spends four times as long being planned as being run; prepared, the
# database's CPU per recall halves (docs/public-apis.md). Turn it off behind a
# transaction-mode pooler that does not track prepared statements (PgBouncer before 1.21).
DATABASE_SERVER_SIDE_BINDING = env.bool("DATABASE_SERVER_SIDE_BINDING", default=True)
DATABASE_PREPARE_THRESHOLD = env.int("DATABASE_PREPARE_THRESHOLD", default=5)

# Read replicas (reviews/recall/replicas.py): PostgreSQL streaming replicas of the default database,
# comma-separated URLs. Recall's fact reads and a few read-only auditor pages go to one;
# every write, and every page that must see its own writes, stays on the primary. A replica
# that fails a query, or is more than DATABASE_REPLICA_MAX_LAG_SECONDS behind, is left out
# for DATABASE_REPLICA_RETRY_SECONDS (logged) and the primary serves instead.
DATABASE_REPLICAS = []
for _number, _url in enumerate(env.names("DATABASE_REPLICA_URLS"), start=1):
    DATABASES[f"replica_{_number}"] = {
        **Env.db_url_config(_url),
        "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],
        # Under test, a replica serves the primary's test database (it replicates it).
        "TEST": {"MIRROR": "default"},
    }
    DATABASE_REPLICAS.append(f"replica_{_number}")
DATABASE_REPLICA_MAX_LAG_SECONDS = env.float("DATABASE_REPLICA_MAX_LAG_SECONDS", default=5)
DATABASE_REPLICA_RETRY_SECONDS = env.float("DATABASE_REPLICA_RETRY_SECONDS", default=30)
DATABASE_ROUTERS = ["reviews.recall.replicas.ReplicaRouter"]

if IS_POSTGRES and DATABASE_SERVER_SIDE_BINDING:
    for _alias in ("default", *DATABASE_REPLICAS):
        DATABASES[_alias].setdefault("OPTIONS", {}).update(
            server_side_binding=True,
            # Django turns psycopg's prepared statements off unless OPTIONS names a
            # threshold; without one every statement is parsed and planned each time.
            prepare_threshold=DATABASE_PREPARE_THRESHOLD,
        )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Sign-in throttling (django-axes; reviews/web/throttling.py): MEMORY_LOGIN_FAILURE_LIMIT wrong
# passwords for one username from one address lock that pair out for the cool-off, the
# right password included; the lockout is audited (staff.locked_out) in the account's tenant.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("MEMORY_LOGIN_FAILURE_LIMIT", default=5)
# Password spraying (one address, many usernames, a try or two each) never reaches the
# per-account limit: an address is refused after this many failures across usernames within
# the cool-off (reviews/web/throttling.py). Higher than the per-account limit: offices share one.
MEMORY_LOGIN_ADDRESS_FAILURE_LIMIT = env.int("MEMORY_LOGIN_ADDRESS_FAILURE_LIMIT", default=20)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("MEMORY_LOGIN_COOL_OFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # a success forgets the earlier failures
AXES_USERNAME_CALLABLE = "reviews.web.throttling.tracked_username"
AXES_LOCKOUT_CALLABLE = "reviews.web.throttling.locked_out_response"
# The audit trail records what matters (lockouts); Axes' own log of every sign-in would grow
# without end. Form fields it keeps of a failure are masked (the password always is).
AXES_DISABLE_ACCESS_LOG = True
# Masked in the attempts Axes stores: "next" is whatever the sign-in form was sent with.
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "csrfmiddlewaretoken", "next"]
LOGIN_URL = "reviews:login"
LOGIN_REDIRECT_URL = "reviews:queue"

# --- Internationalisation -----------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Static files -------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve straight from the app and project static dirs, so a first run needs no collectstatic.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_ROOT = Path(env.str("MEMORY_MEDIA_ROOT", default=str(BASE_DIR / "var")))

# --- Security -----------------------------------------------------------------------------
# docs/operations.md's "Security" section explains each choice; production (DJANGO_DEBUG=0) gets the
# strict values by default, so `manage.py check --deploy` is clean (tests/core/test_deploy.py).
SESSION_COOKIE_HTTPONLY = True
# A staff session ends after a working day, not Django's default fortnight; a password
# change ends every other session of the account (Django checks the session's password
# hash on each request). The subject's portal session is shorter still (views/portal.py).
SESSION_COOKIE_AGE = int(env.float("DJANGO_SESSION_HOURS", default=12) * 3600)
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG)
# Load balancers probe the health checks over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
# Joining the browsers' preload list is the domain owner's decision, and hard to take back:
# off unless asked for, and then check --deploy's reminder (W021) is silenced for that reason.
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# Content-Security-Policy (django-csp): scripts, styles, images and fonts only from this site,
# no inline script or style (the pages carry none; tests/browser fail on a violation), no
# framing, forms posting only here. DJANGO_CSP_REPORT_ONLY=1 sends the same policy as
# Report-Only (browsers report violations and block nothing) to try a change of policy out.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "report-uri": env.names("DJANGO_CSP_REPORT_URI") or None,
    }
}
if env.bool("DJANGO_CSP_REPORT_ONLY", default=False):
    CONTENT_SECURITY_POLICY_REPORT_ONLY, CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY, None

# Request bodies above this size are refused with 413 (SPEC §7).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MEMORY_MAX_BODY_BYTES", default=2 * 1024 * 1024)

# --- API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["reviews.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["reviews.api.parsers.StrictJSONParser"],
    "EXCEPTION_HANDLER": "reviews.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {"api_key": env.str("MEMORY_API_RATE", default="6000/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Portal API",
    "DESCRIPTION": "Governed long-term entity memory for LLM agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI served from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The operations answered by plain Django views (recall), declared by DRF views.
    "PREPROCESSING_HOOKS": ["reviews.api.schema.document_plain_views"],
    # drf-spectacular's own enum hook, then the errors every operation shares.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "reviews.api.schema.add_common_error_responses",
    ],
    # Two choice sets share the field name "source": each gets a name of its own (otherwise
    # a hash suffix, and a warning in `check --deploy`).
    "ENUM_NAME_OVERRIDES": {
        "SourceEnum": "reviews.models.choices.Source",
        "ApiKeySourceEnum": "reviews.api.keys.API_KEY_SOURCE_CHOICES",
    },
}

# --- Cache --------------------------------------------------------------------------------
# API rate limits and the reviewers' cached figures live in the cache. The default is each
# process's own memory: with several web processes, each would count a key's calls alone
# (the limit multiplied by the number of workers). MEMORY_CACHE_URL (redis://…) shares it.
def shared_cache(url: str) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "memory-portal",
        }
    }


if env.str("MEMORY_CACHE_URL", default=""):
    CACHES = shared_cache(env.str("MEMORY_CACHE_URL"))

# --- Background work ----------------------------------------------------------------------
# No broker: run tasks in-process (the embedded default). on_commit enqueueing keeps the
# same order of events as with a real worker.
TASKS_IN_PROCESS = not env.str("CELERY_BROKER_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or "memory://localhost/"
CELERY_TASK_ALWAYS_EAGER = TASKS_IN_PROCESS
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for another
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The worker logs through LOGGING above (its handler masks credentials), not handlers of its own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BEAT_SCHEDULE = {
    "extract-pending-sweep": {"task": "reviews.tasks.sweep_pending_extractions", "schedule": timedelta(minutes=1)},
    "carry-out-deletions": {"task": "reviews.tasks.carry_out_due_deletions", "schedule": timedelta(minutes=1)},
    "expire-facts": {"task": "reviews.tasks.expire_facts", "schedule": timedelta(minutes=15)},
    "reconcile-projection": {"task": "reviews.tasks.reconcile_projection", "schedule": timedelta(hours=1)},
    "recall-partitions": {"task": "reviews.tasks.maintain_recall_partitions", "schedule": timedelta(hours=1)},
    # Does nothing unless MEMORY_RECALL_RECORD_STREAM_URL is set: a backstop for the drain
    # process (which writes records within milliseconds), not the main path.
    "drain-recall-records": {"task": "reviews.tasks.drain_recall_records", "schedule": timedelta(seconds=5)},
    # Webhook deliveries whose retry is due, or whose on-commit send the broker lost.
    "deliver-webhooks": {"task": "reviews.tasks.deliver_due_webhooks", "schedule": timedelta(seconds=5)},
    "prune-webhook-events": {"task": "reviews.tasks.prune_webhook_events", "schedule": timedelta(days=1)},
}

# --- Memory Portal ------------------------------------------------------------------------
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="") or None
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
MEMORY_EXTRACTOR = env.str("MEMORY_EXTRACTOR", default="") or ("llm" if OPENAI_API_KEY else "rules")
MEMORY_EXTRACTOR_MODEL = env.str("MEMORY_EXTRACTOR_MODEL", default="gpt-4.1-mini")
MEMORY_EXTRACTOR_TIMEOUT = env.float("MEMORY_EXTRACTOR_TIMEOUT", default=30)
# Relevance by meaning for recall's `q` (SPEC §5, docs/embedders.md): `local` (a
# multilingual sentence encoder shipped in a package, CPU, no network), `openai:<model>`
# (OPENAI_BASE_URL honoured) or `none` (lexical only).
MEMORY_EMBEDDER = env.str("MEMORY_EMBEDDER", default="local")
MEMORY_EMBEDDER_TIMEOUT = env.float("MEMORY_EMBEDDER_TIMEOUT", default=10)
# How the model is asked for structure: function_calling works on most OpenAI-compatible
# servers; json_schema where the server supports structured outputs.
MEMORY_EXTRACTOR_METHOD = env.str("MEMORY_EXTRACTOR_METHOD", default="function_calling")
# Quick retries inside one attempt (the HTTP client's own backoff), then attempts with
# exponential backoff (base × 2^n, capped) until the ceiling marks the message failed.
MEMORY_EXTRACTOR_HTTP_RETRIES = env.int("MEMORY_EXTRACTOR_HTTP_RETRIES", default=2)
MEMORY_EXTRACTION_MAX_ATTEMPTS = env.int("MEMORY_EXTRACTION_MAX_ATTEMPTS", default=5)
MEMORY_EXTRACTION_RETRY_BASE_SECONDS = env.float("MEMORY_EXTRACTION_RETRY_BASE_SECONDS", default=10)
MEMORY_EXTRACTION_RETRY_MAX_SECONDS = env.float("MEMORY_EXTRACTION_RETRY_MAX_SECONDS", default=600)
# A pending message not extracted this long after it was due is presumed lost by the broker.
MEMORY_EXTRACTION_SWEEP_GRACE_SECONDS = env.float("MEMORY_EXTRACTION_SWEEP_GRACE_SECONDS", default=120)
# The LangGraph Store that mirrors published facts. Empty: the same database as Django.
MEMORY_STORE_URL = env.str("MEMORY_STORE_URL", default="")
# Seconds a process trusts an API key it already looked up (0: look up every call). A
# revoked key stops working in every process within this time.
MEMORY_API_KEY_CACHE_SECONDS = env.float("MEMORY_API_KEY_CACHE_SECONDS", default=5)
# How long a rotated API key keeps working beside its replacement (0: it ends at once).
MEMORY_API_KEY_ROTATION_GRACE_SECONDS = env.int("MEMORY_API_KEY_ROTATION_GRACE_SECONDS", default=86400)
# How long a reviewer's claim on queue items lasts without activity (SPEC §4).
MEMORY_REVIEW_CLAIM_MINUTES = env.float("MEMORY_REVIEW_CLAIM_MINUTES", default=15)
# PostgreSQL: commit recall records without waiting for the WAL flush (asynchronous
# commit). Faster recalls; a crash of the database server may lose the last fraction of a
# second of recall records (never a fact, never an audit event). Off: every record durable.
MEMORY_RECALL_ASYNC_COMMIT = env.bool("MEMORY_RECALL_ASYNC_COMMIT", default=False)
# PostgreSQL: a Redis URL hands recall records to a stream there, written to the database in
# batches by `manage.py recall_records_drain --follow` and the beat (durable, never twice:
# reviews/recall/records.py). Empty: each recall writes its own record.
MEMORY_RECALL_RECORD_STREAM_URL = env.str("MEMORY_RECALL_RECORD_STREAM_URL", default="")
MEMORY_RECALL_RECORD_STREAM_KEY = env.str("MEMORY_RECALL_RECORD_STREAM_KEY", default="memory-portal:recall-records")
# Recall records older than this many days are dropped a whole day at a time (PostgreSQL:
# one partition per day, reviews/recall/partitions.py; SQLite keeps every record).
MEMORY_RECALL_RETENTION_DAYS = env.int("MEMORY_RECALL_RETENTION_DAYS", default=90)
MEMORY_PORTAL_LINK_MAX_AGE = env.int("MEMORY_PORTAL_LINK_MAX_AGE", default=24 * 3600)
# How long a subject can undo "delete this memory" before the erasure proper runs.
MEMORY_UNDO_SECONDS = env.int("MEMORY_UNDO_SECONDS", default=30)
MEMORY_PUBLIC_BASE_URL = env.str("MEMORY_PUBLIC_BASE_URL", default="http://127.0.0.1:8000")
# Value digests (audit chain, duplicates, suppressions) are keyed with their own key, never
# DJANGO_SECRET_KEY, so rotating the secret key breaks nothing (SPEC §6). Old digest keys
# stay listed after a rotation: verification and lookups try them after the current one.
MEMORY_DIGEST_KEY = env.str("MEMORY_DIGEST_KEY", default="") or (
    # Only good enough for a first run on a developer machine; refused below otherwise.
    "insecure-dev-digest-key-set-MEMORY_DIGEST_KEY-in-production"
)
if not DEBUG and MEMORY_DIGEST_KEY.startswith("insecure-dev-"):
    raise RuntimeError("MEMORY_DIGEST_KEY must be set when DJANGO_DEBUG is off.")
MEMORY_DIGEST_OLD_KEYS = env.names("MEMORY_DIGEST_OLD_KEYS")

# --- Webhooks (SPEC §7b) ---------------------------------------------------------------------
# Seconds to wait before each retry of a delivery; after the last, the delivery is failed.
MEMORY_WEBHOOK_RETRY_SECONDS = [float(s) for s in env.names("MEMORY_WEBHOOK_RETRY_SECONDS", default="5,30,120,600,3600")]
# Receivers inside the operator's own network (loopback, private addresses, plain http).
MEMORY_WEBHOOK_ALLOW_PRIVATE = env.bool("MEMORY_WEBHOOK_ALLOW_PRIVATE", default=False)
MEMORY_WEBHOOK_TIMEOUT_SECONDS = env.float("MEMORY_WEBHOOK_TIMEOUT_SECONDS", default=5)

# --- Metrics (SPEC §8) -----------------------------------------------------------------------
# GET /metrics answers only with "Authorization: Bearer <token>"; unset: 404, and nothing counted.
MEMORY_METRICS_TOKEN = env.str("MEMORY_METRICS_TOKEN", default="")
# prometheus-client's multiprocess mode (gunicorn): a directory the workers share, emptied at start.
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", default="")

LOG_FORMAT = env.str("DJANGO_LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise RuntimeError("DJANGO_LOG_FORMAT is plain or json.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "reviews.jsonlog.JsonFormatter"},
    },
    # Every record is masked on its way out (reviews/logs.py): a credential in an address,
    # a message or a traceback never reaches a log, and a 4xx is one line.
    "filters": {"mask_credentials": {"()": "reviews.logs.MaskCredentials"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            # plain (default) or json: one object a line with the request id (reviews/jsonlog.py)
            "formatter": LOG_FORMAT,
            "filters": ["mask_credentials"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        "celery.app.trace": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its start-up banner, in every process
    },
}
