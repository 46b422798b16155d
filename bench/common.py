"""What every benchmark does the same way: plain HTTP, its own database, and tasks sent to a broker."""
from __future__ import annotations

import os

# The benchmarks run as production does (DJANGO_DEBUG=0) but speak plain HTTP to their own
# loopback servers and test clients: no redirect to HTTPS (servers they start inherit this).
os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")


def ensure_database(url: str, *, reset: bool = False) -> None:
    """Create the database ``url`` names if it is missing; ``reset`` drops it first."""
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        if reset:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def publish_tasks_to(broker: str) -> None:
    """Send tasks to ``broker`` as production does, instead of running them in this process
    (the settings' default without CELERY_BROKER_URL); ``memory://`` publishes and never runs."""
    from memory_portal.celery import app

    app.conf.broker_url, app.conf.task_always_eager = broker, False
