"""Processes that start at once (gunicorn's forked workers) set up a fresh store together."""
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection

BASE_DIR = Path(__file__).resolve().parents[2]
PROCESSES = 6
SET_UP = """
import os, time
from pathlib import Path
import django
django.setup()
from reviews import publication
store = publication._connect_store()  # connected: what is left is the set-up itself
go = Path(os.environ["GO_FILE"])
(go.parent / f"ready-{os.getpid()}").touch()
while not go.exists():
    time.sleep(0.0005)
publication._set_up(store, *publication.store_location())
store.put(("race",), str(os.getpid()), {"ok": True})
"""

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the race is PostgreSQL's")


@pytest.mark.django_db
def test_a_fresh_store_set_up_by_several_processes_at_once(tmp_path):
    server = "postgres://{USER}@{HOST}:{PORT}".format(**connection.settings_dict)
    name = f"test_mp_store_setup_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        go = tmp_path / "go"
        env = {**os.environ, "PYTHONPATH": str(BASE_DIR), "DJANGO_SETTINGS_MODULE": "memory_portal.settings",
               "MEMORY_STORE_URL": f"{server}/{name}", "GO_FILE": str(go)}
        processes = [subprocess.Popen([sys.executable, "-c", SET_UP], cwd=BASE_DIR, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                     for _ in range(PROCESSES)]
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("ready-*"))) < PROCESSES and time.monotonic() < deadline:
            time.sleep(0.05)
        go.touch()  # every process is connected and waits at the line: off they go together
        outputs = [process.communicate(timeout=120)[0] for process in processes]

        assert [process.returncode for process in processes] == [0] * PROCESSES, "\n".join(outputs)
        with psycopg.connect(f"{server}/{name}") as store_db:
            assert store_db.execute("SELECT count(*) FROM store WHERE prefix = 'race'").fetchone()[0] == PROCESSES
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
