"""gunicorn serving the app on the test database, as in production, for tests that need
what only a real server shows (a reset connection, several workers)."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(*, workers: int, **environment: str):
    """Start gunicorn with ``workers`` on a free port and ``environment`` added; yield the
    port once it accepts connections; stop it after."""
    db = connection.settings_dict
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DJANGO_TEST_DB_NAME": "",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(workers),
        **environment,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memory_portal.wsgi"], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start: {process.stderr.read().decode()}")
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
