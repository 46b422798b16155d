"""Point this process's Celery app at a broker for a while (the settings chose eager mode)."""
import socket
import threading
from contextlib import contextmanager

from reviews.background import publisher


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


@contextmanager
def publisher_held():
    """Keep the task-publishing lane busy until the block ends: yields an Event set once the
    lane got past the hold. A request that returns while it is unset did not wait for a
    publish (nothing could be published meanwhile), whatever the machine's speed."""
    gate, passed = threading.Event(), threading.Event()

    def hold():
        gate.wait(60)  # a safety bound only: the block's end opens the gate
        passed.set()

    publisher.submit(hold)
    try:
        yield passed
    finally:
        gate.set()
