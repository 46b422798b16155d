"""What every benchmark does the same way: plain HTTP, its own database, and tasks sent to a broker."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

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


def server_env(name: str, **extra: str) -> dict[str, str]:
    """The environment of a benchmark's own server: production settings with throwaway
    keys named after the benchmark, quiet logs; ``extra`` adds or overrides."""
    return {
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": f"bench-{name}-only-not-a-secret-" + "x" * 32,
        "MEMORY_DIGEST_KEY": f"bench-{name}-only-digest-key",
        "LOG_LEVEL": "WARNING",
        "PYTHONWARNINGS": "ignore::UserWarning",
        **extra,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def start(command: list[str], env: dict, log: Path, cwd: Path) -> subprocess.Popen:
    """A server of the benchmark's own, in its own process group so that stop() ends all of it."""
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def serving_when_healthy(server: subprocess.Popen, port: int, *, where: str = "") -> subprocess.Popen:
    """``server`` once its /healthz answers 200 (within a minute); stopped, and the bench
    ended, otherwise."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit(f"gunicorn did not start{' in ' + where if where else ''}")
