"""gunicorn settings, read automatically from the working directory (`gunicorn memory_portal.wsgi`).

The app is loaded once in the master and forked: workers share its memory, the sentence
encoder's weights included (when_ready). Before each fork the collector is set up for
serving (memory_portal/collector.py): what was loaded at start-up is frozen out of its
reach, full collections are rare (the tail of the queue's latency in
bench/review_queue.py without it) and each young collection short (the tail of recall's
in bench/recall.py when the young generation was large).

The access log never shows recall's question or a credential in an address
(reviews/logs.py): the request line (path segments and query), the query string and the
Referer are rewritten; the error log's records are masked.
"""
from pathlib import Path

import environ
from gunicorn.glogging import Logger
from prometheus_client import multiprocess

env = environ.Env()
bind = env.str("GUNICORN_BIND", default="127.0.0.1:8000")
workers = env.int("GUNICORN_WORKERS", default=4)
preload_app = True
timeout = env.int("GUNICORN_TIMEOUT", default=60)
accesslog = env.str("GUNICORN_ACCESS_LOG", default="") or None  # "-" for stdout; off by default
# Which proxies may say the request came over HTTPS (X-Forwarded-Proto; see README "Security").
forwarded_allow_ips = env.str("GUNICORN_FORWARDED_ALLOW_IPS", default="127.0.0.1,::1")


class MaskedAccessLogger(Logger):
    def setup(self, cfg):
        from reviews.logs import MaskCredentials  # the project is importable once gunicorn reads its app

        super().setup(cfg)
        # gunicorn's error log writes a malformed request line as it came.
        self.error_log.addFilter(MaskCredentials())

    def atoms(self, resp, req, environ, request_time):
        from reviews.logs import loggable_query, loggable_uri  # as in setup

        atoms = super().atoms(resp, req, environ, request_time)
        atoms["r"] = f"{environ['REQUEST_METHOD']} {loggable_uri(environ['RAW_URI'])} {environ['SERVER_PROTOCOL']}"
        atoms["q"] = loggable_query(environ.get("QUERY_STRING", ""))
        for referer in ("f", "{referer}i"):
            if atoms.get(referer) not in (None, "-"):
                atoms[referer] = loggable_uri(atoms[referer])
        return atoms


logger_class = MaskedAccessLogger


# prometheus-client's multiprocess mode (SPEC §8 /metrics): each worker writes its counts
# to files in this directory and a scrape sums them. Set it in the environment of the
# master, so the app it preloads already counts into files.
prometheus_multiproc_dir = env.str("PROMETHEUS_MULTIPROC_DIR", default="")


def on_starting(server):
    """A directory left by an earlier run holds that run's counts: start from zero."""
    if prometheus_multiproc_dir:
        for leftover in Path(prometheus_multiproc_dir).glob("*.db"):
            leftover.unlink()


def child_exit(server, worker):
    """A worker's live-only series end with it; its counters stay in the sum."""
    if prometheus_multiproc_dir:
        multiprocess.mark_process_dead(worker.pid, prometheus_multiproc_dir)


def when_ready(server):
    """The app is loaded (preload_app) and no worker forked yet: load the sentence encoder
    here too, once, so the workers share its weights (copy-on-write) and no worker's first
    question with `q` waits for them (reviews/embeddings/embedders.py, ``prepare``)."""
    from reviews.embeddings.embedders import configured_embedder

    configured_embedder().prepare()


def pre_fork(server, worker):
    from memory_portal.collector import prepare_for_serving

    prepare_for_serving()
