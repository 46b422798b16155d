"""Settings for the benchmarks: the app's own, plus the bench-only floor view's routes."""
from memory_portal.settings import *  # noqa: F401,F403

ROOT_URLCONF = "bench.urls"
