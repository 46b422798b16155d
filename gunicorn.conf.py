"""gunicorn settings, read automatically from the working directory (`gunicorn memory_portal.wsgi`).

The app is loaded once in the master and forked: workers share its memory, and
``gc.freeze()`` moves everything loaded at start-up out of the collector's reach, so
Python's cyclic collector no longer walks the whole app in the middle of a request (the
tail of the queue's latency in bench/review_queue.py without it).
"""
import gc

import environ

env = environ.Env()
bind = env.str("GUNICORN_BIND", default="127.0.0.1:8000")
workers = env.int("GUNICORN_WORKERS", default=4)
preload_app = True
timeout = env.int("GUNICORN_TIMEOUT", default=60)
accesslog = env.str("GUNICORN_ACCESS_LOG", default="") or None  # "-" for stdout; off by default


def pre_fork(server, worker):
    gc.freeze()
