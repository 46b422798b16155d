"""gunicorn settings, read automatically from the working directory (`gunicorn memory_portal.wsgi`).

The app is loaded once in the master and forked: workers share its memory, and
``gc.freeze()`` moves everything loaded at start-up out of the collector's reach, so
Python's cyclic collector no longer walks the whole app in the middle of a request (the
tail of the queue's latency in bench/review_queue.py without it).
"""
import gc
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "4"))
preload_app = True
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG")  # "-" for stdout; off by default


def pre_fork(server, worker):
    gc.freeze()
