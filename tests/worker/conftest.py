"""A real Redis and a real Celery worker for the queue tests (marked ``worker``).

Each test starts its own ``redis-server`` on a free port (never the shared one on 6379)
and ``celery -A memory_portal worker`` as a subprocess pointed at it and at the test
database, so the worker sees what the test committed (``transactional_db``).
"""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.db import connection

from tests.worker.brokers import unused_port

BASE_DIR = Path(__file__).resolve().parents[2]
REDIS_SERVER = os.environ.get("TEST_REDIS_SERVER") or shutil.which("redis-server")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/worker/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.worker)


def wait_for(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def redis_server():
    """start(port=None) → (broker_url, port): a throwaway Redis, stopped after the test."""
    if not REDIS_SERVER:
        pytest.fail("redis-server not found: apt-get install redis-server (or set TEST_REDIS_SERVER)")
    started = []

    def start(port: int | None = None):
        port = port or unused_port()
        process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        client = redis.Redis(host="127.0.0.1", port=port)

        def answers():
            try:
                return client.ping()
            except redis.ConnectionError:
                return False

        wait_for(answers, 10, f"redis-server on port {port}")
        return f"redis://127.0.0.1:{port}/0", port

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


@pytest.fixture
def celery_worker(transactional_db, tmp_path):
    """start(broker_url, **env) → a running worker process (its own process group)."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker needs the test database on PostgreSQL (set DATABASE_URL)")
    database_url = "postgres://{USER}@{HOST}:{PORT}/{NAME}".format(**connection.settings_dict)
    workers = []

    def start(broker_url: str, **extra_env):
        log = tmp_path / f"worker-{len(workers) + 1}.log"
        env = {
            **os.environ,
            "PYTHONPATH": str(BASE_DIR),
            "DJANGO_SETTINGS_MODULE": "memory_portal.settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "LOG_LEVEL": "INFO",
            **{key: str(value) for key, value in extra_env.items()},
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memory_portal", "worker", "--pool", "prefork",
             "--concurrency", "1", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--hostname", f"test-{len(workers) + 1}-{os.getpid()}@%h"],
            cwd=BASE_DIR,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: a SIGKILL reaches the pool's children too
        )
        process.log = log
        workers.append(process)
        wait_for(lambda: "ready." in log.read_text() or process.poll() is not None, 60, "the worker to start")
        if process.poll() is not None:
            raise AssertionError(f"the worker exited:\n{log.read_text()}")
        return process

    yield start
    for process in workers:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


def kill_hard(process) -> None:
    """SIGKILL the worker and its pool children: no cleanup, no ack, nothing."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)
