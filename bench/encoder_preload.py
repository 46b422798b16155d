"""Benchmark: the sentence encoder loaded in gunicorn's master against lazily per worker.

gunicorn.conf.py's ``when_ready`` loads the local encoder (and embeds the relevance bar's
reference sentences) in the master before it forks, so the workers share the weights and
no worker's first question with ``q`` waits for them. This serves the app with gunicorn
both ways, alternating, and prints for each:

* the memory of the master and its workers after every worker has answered a question
  (proportional set size, PSS: a page shared by N processes counts 1/N in each, so the sum
  is what the server holds), and each worker's resident set for comparison;
* the latency of the first questions sent (each a new question, so none comes from a
  worker's cache): with the lazy load, each worker's first one includes loading.

"Lazily" is the same gunicorn.conf.py without its ``when_ready``.

    python bench/encoder_preload.py [--workers 4] [--rounds 2] [--questions 40] [--reuse]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, serving_when_healthy, stop  # noqa: E402
from bench.recall import SERVER, add_seed_arguments, prepare, server_env  # noqa: E402

LAZY_CONFIG = """exec(open({path!r}).read())
del when_ready  # the workers load the encoder on their first question
"""


def memory_mb(pid: int, field: str) -> int:
    """``Pss`` (from smaps_rollup) or ``VmRSS`` (from status) of ``pid``, in MB."""
    source = f"/proc/{pid}/smaps_rollup" if field == "Pss" else f"/proc/{pid}/status"
    with open(source) as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    raise RuntimeError(f"no {field} for {pid}")


def serve_and_measure(config: str, *, database_url: str, key: str, workers: int, questions: int) -> dict:
    env = server_env(database_url)
    env.pop("CELERY_BROKER_URL", None)
    env["MEMORY_EMBEDDER"] = "local"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "-c", config,
         "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )
    try:
        started = time.perf_counter()
        serving_when_healthy(server, port, where=config)
        ready_s = time.perf_counter() - started
        latencies = []
        for number in range(1, questions + 1):
            q = urllib.parse.quote(f"what does user {number} like to drink in the morning")
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/v1/recall?user_id=user-{number}&q={q}",
                headers={"Authorization": f"Bearer {key}"},
            )
            sent = time.perf_counter()
            urllib.request.urlopen(request, timeout=60).read()
            latencies.append((time.perf_counter() - sent) * 1000)
        children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        worker_pids = [int(pid) for pid in children]
        return {
            "ready_s": ready_s,
            "pss_total": memory_mb(server.pid, "Pss") + sum(memory_mb(pid, "Pss") for pid in worker_pids),
            "rss_worker": statistics.median(memory_mb(pid, "VmRSS") for pid in worker_pids),
            "slowest": max(latencies),
            "median": statistics.median(latencies),
        }
    finally:
        stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seed_arguments(parser, facts=100_000, subjects=10_000, database="mp_bench_recall_cpu")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--questions", type=int, default=40, help="New questions sent after start, one at a time.")
    args = parser.parse_args()
    os.environ["MEMORY_EMBEDDER"] = "local"
    seeded = prepare(args, key_name="bench-preload")
    database_url = f"{SERVER}/{args.database}"

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as lazy:
        lazy.write(LAZY_CONFIG.format(path=str(ROOT / "gunicorn.conf.py")))
    configs = {"loaded in the master": str(ROOT / "gunicorn.conf.py"), "lazily per worker": lazy.name}
    results = {name: [] for name in configs}
    try:
        for _ in range(args.rounds):
            for name, config in configs.items():
                results[name].append(serve_and_measure(
                    config, database_url=database_url, key=seeded.key, workers=args.workers, questions=args.questions,
                ))
    finally:
        os.unlink(lazy.name)

    print()
    print(f"gunicorn, {args.workers} workers, MEMORY_EMBEDDER=local; {args.questions} new questions after start; "
          f"{args.rounds} rounds, alternating")
    print(f"{'encoder':22} {'ready s':>8} {'PSS, all MB':>12} {'RSS/worker':>11} {'median ms':>10} {'slowest ms':>11}")
    for name, runs in results.items():
        print(f"{name:22} {statistics.median(r['ready_s'] for r in runs):8.1f} "
              f"{statistics.median(r['pss_total'] for r in runs):12.0f} {statistics.median(r['rss_worker'] for r in runs):11.0f} "
              f"{statistics.median(r['median'] for r in runs):10.0f} {max(r['slowest'] for r in runs):11.0f}")


if __name__ == "__main__":
    main()
