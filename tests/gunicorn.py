"""The project's servers in their own processes on the test database, as in production:
gunicorn serving the app, for tests that need what only a real server shows (a reset
connection, several workers), and the MCP server (tests/conftest.py)."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def server_process(command: list[str], *, port: int, **environment: str):
    """Run ``command`` (a server of the project's own) on the test database with
    ``environment`` added; yield once it accepts connections on ``port``; stop it after.
    Its output goes to a file, read if it fails to start: a pipe nobody reads would stop
    a long-lived server once full."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DJANGO_TEST_DB_NAME": "",
        **environment,
    }
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        output.seek(0)
                        raise RuntimeError(f"{' '.join(command)} did not start: {output.read().decode()}")
                    time.sleep(0.2)
            yield
        finally:
            process.terminate()
            process.wait(timeout=10)


@contextlib.contextmanager
def serving(*, workers: int, **environment: str):
    """Start gunicorn with ``workers`` on a free port and ``environment`` added; yield the
    port once it accepts connections; stop it after."""
    port = free_port()
    with server_process([sys.executable, "-m", "gunicorn", "memory_portal.wsgi"], port=port,
                        GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS=str(workers), **environment):
        yield port
