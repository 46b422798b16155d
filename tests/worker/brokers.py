"""Point this process's Celery app at a broker for a while (the settings chose eager mode)."""
import socket
from contextlib import contextmanager


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _reset_connections(app) -> None:
    # Drop the app's references only: kombu keeps one pool per URL for the whole process,
    # and closing it would break whoever uses that URL next.
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


@contextmanager
def celery_using_broker(url: str):
    from memory_portal.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)
    _reset_connections(app)
    app.conf.broker_url, app.conf.task_always_eager = url, False
    try:
        yield app
    finally:
        _reset_connections(app)
        app.conf.broker_url, app.conf.task_always_eager = saved
