"""Handing work to Celery without ever making a request wait on, or fail for, the broker.

The database row is always the record of work (a pending message, a fact whose projection
is due); the broker only makes it happen sooner. So publishing a task never raises: a
failure is logged and the safety nets (the extraction sweep, the projection reconcile)
pick the work up later.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from enum import StrEnum

from django.db import connection

from memory_portal.celery import app as celery_app

logger = logging.getLogger(__name__)

# After a failed publish, stop trying the broker for a while: each try can take seconds
# (the Redis client retries its connection) and the safety nets send the work anyway.
BROKER_BACKOFF_SECONDS = 10.0
_broker_down_until: dict[str, float] = {}  # per broker URL


class BackgroundLane:
    """One daemon thread running jobs in order, so a request never waits on the broker or a model.

    A job lost with its process (a crash, a restart) loses nothing: the rows it was about
    are still in the database, and the safety nets find them.
    """

    def __init__(self, name: str):
        self.name = name
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, func, *args) -> None:
        with self._lock:
            # Also after a fork (gunicorn, Celery prefork): the parent's thread is not in the child.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._jobs.put((func, args))

    def drain(self) -> None:
        """Wait until every job submitted so far has run (commands and tests)."""
        self._jobs.join()

    def _run(self) -> None:
        while True:
            func, args = self._jobs.get()
            try:
                func(*args)
            except Exception:  # noqa: BLE001 - a job's failure must not end the lane
                logger.exception("background job %s failed", getattr(func, "__name__", func))
            finally:
                connection.close()
                self._jobs.task_done()


publisher = BackgroundLane("task-publisher")


class TaskName(StrEnum):
    """The Celery tasks the services hand work to, by their registered names (reviews/tasks.py).

    By name, so that tasks.py imports the services and no service imports tasks.py.
    """

    PROJECT_SUBJECT = "reviews.tasks.project_subject"
    EMBED_SUBJECT = "reviews.tasks.embed_subject"
    CARRY_OUT_FACT_DELETION = "reviews.tasks.carry_out_fact_deletion"
    AUDIT_EXPORT_RUN = "reviews.tasks.audit_export_run"
    EXTRACT_MESSAGE = "reviews.tasks.extract_message"
    DELIVER_DUE_WEBHOOKS = "reviews.tasks.deliver_due_webhooks"


def task(name: TaskName):
    """The registered task (reviews/tasks.py is imported when the app is ready)."""
    return celery_app.tasks[name]


def runs_in_process() -> bool:
    """No broker configured: tasks run eagerly, in this process (the embedded default)."""
    return bool(celery_app.conf.task_always_eager)


def publish_tasks(name: TaskName, argument_lists: list[tuple], *, countdown: float | None = None) -> int:
    """Send the task ``name`` once per argument tuple over one broker connection; never raises.

    Returns how many were sent. While the broker is known to be down, sends nothing.
    ``countdown``: seconds the worker waits before running them.
    """
    app, sent = celery_app, 0
    broker = str(app.conf.broker_url)
    registered = task(name)
    if time.monotonic() < _broker_down_until.get(broker, 0.0):
        return 0
    try:
        with app.producer_or_acquire() as producer:
            for args in argument_lists:
                registered.apply_async(args, producer=producer, retry=False, countdown=countdown)
                sent += 1
    except Exception as exc:  # noqa: BLE001 - any broker failure: the work is safe in the database
        _broker_down_until[broker] = time.monotonic() + BROKER_BACKOFF_SECONDS
        logger.warning("broker unavailable (%s)", type(exc).__name__)
    return sent
