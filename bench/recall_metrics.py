"""Benchmark: recall throughput with metrics on against metrics off, in one run (SPEC §8).

Two identical gunicorn servers of this tree on one seeded database (bench/recall.py's
seed and wrk load): one with ``MEMORY_METRICS_TOKEN`` and ``PROMETHEUS_MULTIPROC_DIR``
set, as in production with metrics (every recall timed into the workers' shared files),
one without (nothing counted). Slices of wrk alternate between them for a few rounds,
each server idle while the other is measured, so a load that drifts weighs on both
alike; the ratio on / off is taken round by round. At the end the metrics server is
scraped, and its recall count set beside the recalls wrk saw answered.

    python bench/recall_metrics.py [--facts 100000 --subjects 10000] [--reuse] [--connections 8]
        [--rounds 6 --seconds 3] [--workers 2]

Target (issue 40): metrics on within 5% of metrics off (ratio >= 0.95).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, serving_when_healthy  # noqa: E402 - after the path is set
from bench.recall import add_seed_arguments, prepare, run_wrk, server_env  # noqa: E402

TARGET = 0.95
TOKEN = "bench-metrics-token"


def start(database_url: str, port: int, workers: int, extra: dict) -> subprocess.Popen:
    env = {**server_env(database_url), **extra}
    env.pop("CELERY_BROKER_URL", None)
    command = [sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--log-level", "warning", "--backlog", "256", "--workers", str(workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    return serving_when_healthy(server, port)


def recalls_counted(port: int) -> float:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("memory_portal_recall_latency_seconds_count"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seed_arguments(parser, facts=100_000, subjects=10_000, database="mp_bench_recall_metrics")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=3, help="Per slice.")
    parser.add_argument("--rounds", type=int, default=6, help="Slices of each, alternating.")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    seeded = prepare(args, key_name="bench-metrics")
    from django.db import connection

    connection.close()
    database_url = os.environ["DATABASE_URL"]
    scratch = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
    metrics_dir = scratch / "prometheus"
    metrics_dir.mkdir()
    servers = {}
    try:
        servers["off"] = (start(database_url, port := free_port(), args.workers, {"MEMORY_METRICS_TOKEN": ""}), port)
        servers["on"] = (start(database_url, port := free_port(), args.workers, {
            "MEMORY_METRICS_TOKEN": TOKEN, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}), port)
        common = {"mode": "recall", "top": seeded.subjects, "key": seeded.key, "connections": args.connections}
        for name, (_, port) in servers.items():
            run_wrk(port=port, seconds=3, **common)  # warm up
        warm_count = recalls_counted(servers["on"][1])
        results = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (_, port) in servers.items():
                results[name].append(run_wrk(port=port, seconds=args.seconds, **common))
        counted = recalls_counted(servers["on"][1]) - warm_count
    finally:
        for process, _ in servers.values():
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print()
    print(f"{seeded.facts:,} facts over {seeded.subjects:,} subjects; {commit.strip()}; gunicorn {args.workers} sync "
          f"workers each; wrk {args.connections} connections; {args.rounds} rounds of {args.seconds} s slices; "
          f"{os.cpu_count()} CPUs")
    print(f"{'':14} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}   (medians over slices)")
    for name, runs in results.items():
        print(f"metrics {name:6} {statistics.median(r['rps'] for r in runs):8.0f} "
              f"{statistics.median(r['p50_us'] for r in runs) / 1000:8.2f} "
              f"{statistics.median(r['p99_us'] for r in runs) / 1000:8.2f} "
              f"{sum(r['errors'] + r['non_2xx'] for r in runs):7d}")
    ratios = [on["rps"] / off["rps"] for on, off in zip(results["on"], results["off"])]
    ratio = statistics.median(ratios)
    answered = sum(r["requests"] - r["errors"] - r["non_2xx"] for r in results["on"])
    print("on / off, round by round: " + " ".join(f"{value:.3f}" for value in ratios))
    print(f"on / off (median of rounds): {ratio:.3f} (target >= {TARGET}): {'met' if ratio >= TARGET else 'MISSED'}")
    print(f"recalls counted by /metrics: {counted:,.0f}; answered in the measured slices: {answered:,}")


if __name__ == "__main__":
    main()
