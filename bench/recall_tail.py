"""Benchmark: where recall's p99 comes from, the worker's own time or the wait for a worker.

bench/recall.py reports what wrk sees: a request's whole time, from the load generator's
side, which at 16 connections on a few sync workers is mostly the wait for a free worker.
This serves the floor and recall (records through the stream, the drain beside them, as
bench/recall.py's stream mode) with gunicorn's access log on, and sets side by side, slice
by slice: wrk's p50 and p99, and the service time the worker logged (``%(D)s``: from the
request read to the response written) at p50, p99 and p99.9, its maximum, and how many
requests took a worker more than 10 ms.

    python bench/recall_tail.py [--reuse] [--rounds 10] [--workers N] [--nice-drain]

It reuses bench/recall.py's database (``--database``, seeded by it unless ``--reuse``).
The access log costs both servers alike; compare the floor with recall, not these figures
with bench/recall.py's.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port  # noqa: E402
from bench.recall import add_seed_arguments, prepare, run_wrk, server_env, start_drain, stop_drain  # noqa: E402

SLOW_MS = 10


def start_logged_server(database_url: str, port: int, log: Path, *, workers: int | None,
                        stream: tuple[str, str] | None) -> subprocess.Popen:
    env = server_env(database_url, stream=stream)
    env.pop("CELERY_BROKER_URL", None)
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--log-level", "warning", "--backlog", "256", "--access-logfile", str(log),
               "--access-logformat", "%(D)s %(s)s"]
    if workers:
        command += ["--workers", str(workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit("gunicorn did not start")


def service_times(log: Path, skip: int) -> tuple[list[float], int]:
    """Milliseconds of the answered (200) requests logged after the first ``skip`` lines."""
    lines = log.read_text().splitlines()
    times = sorted(int(line.split()[0]) / 1000 for line in lines[skip:] if line.split()[1] == "200")
    return times, len(lines)


def quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seed_arguments(parser)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=3, help="Per slice.")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, help="Override gunicorn.conf.py.")
    parser.add_argument("--nice-drain", action="store_true", help="Run the drain at nice 10.")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()

    seeded = prepare(args, key_name="bench-tail")
    database_url = os.environ["DATABASE_URL"]
    stream = (args.redis, f"bench:recall-tail:{os.getpid()}")
    scratch = Path(tempfile.mkdtemp(prefix="bench-recall-tail-"))
    logs = {"floor": scratch / "floor.log", "recall": scratch / "recall.log"}
    ports = {"floor": free_port(), "recall": free_port()}
    servers = [
        start_logged_server(database_url, ports["floor"], logs["floor"], workers=args.workers, stream=None),
        start_logged_server(database_url, ports["recall"], logs["recall"], workers=args.workers, stream=stream),
    ]
    drain, drain_log = start_drain(database_url, ROOT, stream, scratch)
    if args.nice_drain:
        subprocess.run(["renice", "-n", "10", "-g", str(drain.pid)], check=True, capture_output=True)
    tops = {"floor": seeded.max_fact, "recall": seeded.subjects}
    common = {"key": seeded.key, "connections": args.connections}
    try:
        for mode in ("floor", "recall"):  # warm up: connections, prepared statements, caches
            run_wrk(mode=mode, port=ports[mode], top=tops[mode], seconds=3, **common)
        print(f"{seeded.facts:,} facts; wrk {args.connections} connections, {args.seconds} s slices")
        print(f"{'':9} {'wrk p50':>8} {'p99':>6}   {'service p50':>11} {'p99':>6} {'p99.9':>6} {'max':>6} "
              f"{'>' + str(SLOW_MS) + ' ms':>7}  (ms)")
        for round_number in range(1, args.rounds + 1):
            for mode in ("floor", "recall"):
                _, seen = service_times(logs[mode], 0)
                result = run_wrk(mode=mode, port=ports[mode], top=tops[mode], seconds=args.seconds, **common)
                time.sleep(0.3)  # the last answers' log lines
                times, _ = service_times(logs[mode], seen)
                print(f"{round_number:2} {mode:6} {result['p50_us'] / 1000:8.1f} {result['p99_us'] / 1000:6.1f}   "
                      f"{quantile(times, .5):11.2f} {quantile(times, .99):6.2f} {quantile(times, .999):6.2f} "
                      f"{times[-1]:6.1f} {sum(1 for t in times if t > SLOW_MS):7d}", flush=True)
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGTERM)
        written, waiting = stop_drain(args.redis, stream[1], drain, drain_log)
        print(f"the drain wrote {written:,} records, {waiting} left in the stream")


if __name__ == "__main__":
    main()
