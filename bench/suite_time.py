"""Where the test suite's worker time goes: a ``--durations=0`` log summed by file, phase and kind.

    bin/test --durations=0 -q -p no:randomly > suite.log
    python bench/suite_time.py suite.log [--top 25]

pytest prints each test's setup, call and teardown time (``--durations=0``; phases under
5 ms are left out, ``-vv`` shows them). This sums them by file, by phase, and by the kind of
test, which it learns by collecting the suite (nothing runs):

- browser: drives Chromium (``browser`` mark) against the live server;
- worker: starts a real Celery worker or broker (``worker`` mark);
- transactional: commits for real (``transactional_db``, ``live_server``, a
  TransactionTestCase): PostgreSQL flushes every table after each one;
- db: runs in a transaction rolled back afterwards;
- plain: no database.

The sum is worker time: with N xdist workers the wall time is at least the sum over N.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^\s*(?P<seconds>\d+(?:\.\d+)?)s (?P<phase>setup|call|teardown)\s+(?P<nodeid>\S.*?)\s*$")
PHASES = ("setup", "call", "teardown")
KINDS = ("browser", "worker", "transactional", "db", "plain")


def read_durations(path: Path) -> list[tuple[str, str, float]]:
    """(node id, phase, seconds) for each line of the slowest-durations section."""
    found = []
    for line in path.read_text(errors="replace").splitlines():
        if match := LINE.match(line):
            found.append((match["nodeid"], match["phase"], float(match["seconds"])))
    return found


def kind_of(item) -> str:
    names = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("browser"):
        return "browser"
    if item.get_closest_marker("worker"):
        return "worker"
    marker = item.get_closest_marker("django_db")
    transactional = (
        bool(names & {"transactional_db", "live_server", "django_db_reset_sequences", "django_db_serialized_rollback"})
        or bool(marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")))
    )
    cls = getattr(item, "cls", None)
    if cls is not None:
        from django.test import TestCase, TransactionTestCase

        if issubclass(cls, TransactionTestCase):
            transactional = transactional or not issubclass(cls, TestCase)
            return "transactional" if transactional else "db"
    if transactional:
        return "transactional"
    return "db" if marker or "db" in names else "plain"


def collect_kinds() -> dict[str, str]:
    """Each collected test's kind, by node id."""
    import pytest

    kinds: dict[str, str] = {}

    class Recorder:
        @staticmethod
        def pytest_collection_finish(session):
            kinds.update((item.nodeid, kind_of(item)) for item in session.items)

    os.chdir(ROOT)
    with contextlib.redirect_stdout(io.StringIO()):  # the list of collected tests
        pytest.main(["--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"], plugins=[Recorder()])
    return kinds


def table(title: str, rows: list[tuple], header: tuple) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = [title, "  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(cell).rjust(w) if i else str(cell).ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
              for row in rows]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="the output of a run with --durations=0")
    parser.add_argument("--top", type=int, default=25, help="how many files and tests to list")
    args = parser.parse_args(argv)

    durations = read_durations(args.log)
    if not durations:
        sys.exit(f"{args.log}: no durations (run with --durations=0)")
    kinds = collect_kinds()
    tests = {nodeid for nodeid, _, _ in durations}
    by_file = defaultdict(lambda: dict.fromkeys(PHASES, 0.0))
    by_kind = defaultdict(lambda: dict.fromkeys(PHASES, 0.0))
    by_test = defaultdict(float)
    counted = defaultdict(set)
    for nodeid, phase, seconds in durations:
        kind = kinds.get(nodeid, "unknown")
        by_file[nodeid.split("::")[0]][phase] += seconds
        by_kind[kind][phase] += seconds
        by_test[nodeid] += seconds
        counted[kind].add(nodeid)
    total = sum(seconds for _, _, seconds in durations)

    def row(name, phases, count=None):
        whole = sum(phases.values())
        cells = [name] + ([count] if count is not None else []) + [f"{phases[p]:.0f}" for p in PHASES]
        return (*cells, f"{whole:.0f}", f"{100 * whole / total:.1f}%")

    print(f"{len(tests)} tests, {total:.0f} worker-seconds ({total / 60:.1f} worker-minutes)\n")
    kind_rows = [row(kind, by_kind[kind], len(counted[kind])) for kind in (*KINDS, "unknown") if kind in by_kind]
    print(table("By kind", kind_rows, ("kind", "tests", *PHASES, "total", "share")), end="\n\n")
    phase_rows = [(p, f"{sum(v[p] for v in by_kind.values()):.0f}") for p in PHASES]
    print(table("By phase", phase_rows, ("phase", "seconds")), end="\n\n")
    files = sorted(by_file.items(), key=lambda entry: -sum(entry[1].values()))[: args.top]
    print(table(f"The {args.top} costliest files", [row(name, phases) for name, phases in files],
                ("file", *PHASES, "total", "share")), end="\n\n")
    slowest = sorted(by_test.items(), key=lambda entry: -entry[1])[: args.top]
    print(table(f"The {args.top} slowest tests (all phases)",
                [(nodeid, kinds.get(nodeid, "unknown"), f"{seconds:.1f}") for nodeid, seconds in slowest],
                ("test", "kind", "seconds")))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
