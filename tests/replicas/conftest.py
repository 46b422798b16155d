"""A real PostgreSQL streaming replica of the test server, made (or found) by bin/replica.

The replica copies the whole primary, so the test database that pytest creates on the
primary appears on the replica too: the alias ``replica_1`` is a TEST MIRROR of
``default`` (Django creates nothing for it and points it at the test database's name) on
the replica's port. Only committed data reaches a replica, so these tests run with
``transaction=True``.

Where PostgreSQL's server tools are absent the tests are skipped with bin/replica's
message; under CI (``CI`` set) that is a failure instead, so CI always runs them.
"""
from __future__ import annotations

import copy
import fcntl
import os
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connections

ROOT = Path(__file__).resolve().parents[2]
ALIAS = "replica_1"


def _make_replica() -> tuple[int | None, str]:
    if connections["default"].vendor != "postgresql":
        return None, "read replicas are a PostgreSQL feature; DATABASE_URL is not PostgreSQL"
    run = subprocess.run([str(ROOT / "bin" / "replica")], capture_output=True, text=True)
    if run.returncode == 0:
        return int(run.stdout.strip().splitlines()[-1]), ""
    if run.returncode == 3 and not os.environ.get("CI"):
        return None, run.stderr.strip()
    raise RuntimeError(f"bin/replica failed ({run.returncode}): {run.stderr.strip()}")


REPLICA_PORT, SKIP_REASON = _make_replica()

if REPLICA_PORT:
    # Declared before the test databases are set up, so Django treats it as a mirror.
    _settings = copy.deepcopy(connections.settings["default"])
    _settings["PORT"] = REPLICA_PORT
    _settings["TEST"] = {**_settings["TEST"], "NAME": None, "MIRROR": "default"}
    connections.settings[ALIAS] = _settings

needs_replica = pytest.mark.skipif(REPLICA_PORT is None, reason=SKIP_REASON or "no replica")


class Replica:
    """Control of the replica over its own superuser connection (not the app's)."""

    def __init__(self, port: int):
        self.port = port
        self._control = None

    def _sql(self, port: int, sql: str):
        settings = connections.settings["default"]
        with psycopg.connect(
            host=settings["HOST"] or None, port=port, user=settings["USER"], dbname="postgres", autocommit=True
        ) as conn:
            return conn.execute(sql).fetchone()

    def primary_lsn(self) -> str:
        return self._sql(int(connections.settings["default"]["PORT"] or 5432), "SELECT pg_current_wal_lsn()")[0]

    def _wait_until(self, sql: str, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._sql(self.port, sql)[0]:
                return
            time.sleep(0.05)
        raise AssertionError(f"the replica did not {what}")

    def catch_up(self) -> None:
        """Wait until the replica has replayed everything the primary has written so far."""
        self._wait_until(f"SELECT pg_last_wal_replay_lsn() >= '{self.primary_lsn()}'::pg_lsn", "catch up")

    def received_past_replay(self) -> None:
        """Wait until the replica has received WAL that it has not replayed (it lags)."""
        self._wait_until(f"SELECT pg_last_wal_receive_lsn() >= '{self.primary_lsn()}'::pg_lsn",
                         "receive the primary's WAL")

    def lagging(self, seconds: float) -> None:
        """Wait until the replica reports itself more than ``seconds`` behind."""
        from reviews.recall.replicas import LAG_SQL

        self._wait_until(f"SELECT ({LAG_SQL}) > {seconds}", f"fall {seconds} s behind")

    def pause(self) -> None:
        self._sql(self.port, "SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        self._sql(self.port, "SELECT pg_wal_replay_resume()")

    def terminate_app_sessions(self, dbname: str) -> int:
        return self._sql(
            self.port,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{dbname}' AND pid <> pg_backend_pid()",
        )[0]


@pytest.fixture
def _replay_control_lock():
    """One test at a time controls the shared replica's replay.

    One replica serves every test database of the server, and pausing its replay (the lag
    tests) pauses it for all: a test that uses the replica holds this lock, across
    pytest-xdist's workers and any other test session on the machine. Held per test, not
    per session: a session-long lock made a second worker wait for the first worker's
    whole session to end.
    """
    with open(f"/tmp/memory-portal-replica-{os.environ.get('REPLICA_CLUSTER', 'mp_replica')}.replay.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def replica(_replay_control_lock, settings):
    """The replica, configured as the app's one read replica for this test, caught up."""
    from reviews.recall.replicas import reset_replica_state

    settings.DATABASE_REPLICAS = [ALIAS]
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 3600
    reset_replica_state()
    control = Replica(REPLICA_PORT)
    control.resume()
    control.catch_up()
    yield control
    control.resume()
    connections[ALIAS].close()
    reset_replica_state()
