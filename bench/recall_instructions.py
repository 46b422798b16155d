"""Benchmark: instructions the web process executes per recall, against the floor's.

On a shared machine even CPU time swings from run to run (bench/recall_cpu.py's rounds
moved by 50% on one), so a change of a few per cent in recall's Python cannot be seen in
it. Instructions can: valgrind's callgrind counts them, the same for the same code and
input whatever else the machine runs. Each mode runs in a process of its own under
callgrind, counting only while the measured requests run (the start-up and a warm-up
run uncounted, ``--instr-atstart=no`` and ``callgrind_control``), and requests go
through Django's WSGI handler as gunicorn calls it, as in bench/recall_cpu.py:

* the floor (bench/settings.py's one-row view);
* recall writing its record (durable commit);
* recall handing its record to a Redis stream, the drain run in the same process every
  ``--batch`` recalls (its Python counted with the recall's).

What is not counted: PostgreSQL's and Redis's own work (bench/recall_cpu.py measures
their CPU), system calls' work in the kernel, and waiting. An instruction is not a unit of
time (a cache miss costs many): read the figures as the size of the Python path, which
is what a change to it moves.

``--baseline REF`` counts the code of REF too (a temporary git worktree), so before and
after come from one run. The benchmark's own harness (this file, bench/settings.py and
its floor view) is the current tree's for both: the floor is the same code either way.

    python bench/recall_instructions.py [--facts 100000 --subjects 10000] [--reuse]
        [--requests 500] [--baseline REF] [--batch 50] [--modes floor recall stream]

Needs valgrind (Debian's package ``valgrind``).
"""
from __future__ import annotations

import argparse
import os
import re
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Imported before the tree under test is put first on the path: the harness is this tree's.
from bench.recall import SERVER, add_seed_arguments, baseline_tree, prepare  # noqa: E402
from bench.recall_cpu import SERVING_ENVIRONMENT, request_environ, serve  # noqa: E402

MODES = {"floor": "floor", "recall": "recall, record written", "stream": "recall, records via stream"}
WARM_UP = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seed_arguments(parser, facts=100_000, subjects=10_000, database="mp_bench_recall_cpu")
    parser.add_argument("--requests", type=int, default=500, help="Counted, per mode and tree.")
    parser.add_argument("--batch", type=int, default=50, help="Drain after this many recalls (stream mode).")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--baseline", metavar="REF", help="Also count the code of REF.")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="All three unless named.")
    parser.add_argument("--child", nargs=2, metavar=("TREE", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args, Path(args.child[0]), args.child[1])
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind: apt-get install valgrind")
    if args.requests % args.batch:
        raise SystemExit("--requests must be a multiple of --batch: every counted record is drained while counted")

    os.environ.update(SERVING_ENVIRONMENT)
    os.environ.pop("CELERY_BROKER_URL", None)
    seeded = prepare(args, key_name="bench-instructions")
    from django.db import connections

    connections.close_all()
    with tempfile.TemporaryDirectory(prefix="recall-instructions-") as scratch:
        trees = [("current", ROOT)]
        if args.baseline:
            trees.append((f"baseline {args.baseline}", baseline_tree(args.baseline, Path(scratch))))
        try:
            counts = {(name, mode): count(args, tree, mode, seeded) for name, tree in trees for mode in args.modes}
        finally:
            for name, tree in trees[1:]:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    report(args, seeded, trees, counts)


def count(args, tree: Path, mode: str, seeded) -> int:
    """Instructions per request of ``mode`` served by the code of ``tree``."""
    environment = {**os.environ, "BENCH_KEY": seeded.key, "BENCH_MAX_FACT": str(seeded.max_fact),
                   "BENCH_SUBJECTS": str(seeded.subjects)}
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--child", str(tree), mode, "--requests", str(args.requests),
               "--batch", str(args.batch), "--redis", args.redis, "--database", args.database]
    print(f"  counting {mode} of {tree.name} …", flush=True)
    process = subprocess.Popen(command, cwd=ROOT, env=environment, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def step(expected: str) -> str:
        line = process.stdout.readline().strip()
        if not line.startswith(expected):
            process.kill()
            raise SystemExit(f"{mode}: expected {expected!r}, got {line!r}\n{process.stderr.read()[-3000:]}")
        return line

    pid = step("ready").split()[1]
    subprocess.run(["callgrind_control", "--instr=on", pid], check=True, capture_output=True)
    process.stdin.write("go\n")
    process.stdin.flush()
    step("done")
    subprocess.run(["callgrind_control", "--instr=off", pid], check=True, capture_output=True)
    process.stdin.write("end\n")
    process.stdin.flush()
    _, errors = process.communicate()
    collected = re.search(r"Collected : (\d+)", errors)
    if process.returncode or collected is None:
        raise SystemExit(f"{mode}: exit {process.returncode}\n{errors[-3000:]}")
    return int(collected.group(1)) // args.requests


def child(args, tree: Path, mode: str) -> None:
    """Serve the warm-up, then say "ready" and wait; serve the counted requests between
    "go" and "done"."""
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    os.environ["DATABASE_URL"] = f"{SERVER}/{args.database}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler

    from memory_portal.collector import prepare_for_serving
    from reviews.recall.records import recall_records_drain

    if mode == "stream":
        settings.MEMORY_RECALL_RECORD_STREAM_URL = args.redis
        settings.MEMORY_RECALL_RECORD_STREAM_KEY = f"bench:recall-instructions:{os.getpid()}"
    else:
        settings.MEMORY_RECALL_RECORD_STREAM_URL = ""
    handler, rng = WSGIHandler(), random.Random(7)
    sizes = {"subjects": int(os.environ["BENCH_SUBJECTS"]), "max_fact": int(os.environ["BENCH_MAX_FACT"]),
             "key": os.environ["BENCH_KEY"]}

    def requests(number: int) -> None:
        for done in range(1, number + 1):
            serve(handler, request_environ(mode, rng, **sizes))
            if mode == "stream" and done % args.batch == 0:
                recall_records_drain(max_batches=1, take_over=False)

    requests(WARM_UP)
    recall_records_drain()
    # As gunicorn's master does before forking a worker (gunicorn.conf.py): without it, a
    # full collection lands wherever the allocations happen to add up, and a change that
    # allocates a little more or less moved the count by 100,000 instructions a request.
    prepare_for_serving()
    print("ready", os.getpid(), flush=True)
    sys.stdin.readline()
    requests(args.requests)
    print("done", flush=True)
    sys.stdin.readline()
    recall_records_drain()
    if mode == "stream":
        from reviews.recall.records import _stream

        _stream().client.delete(settings.MEMORY_RECALL_RECORD_STREAM_KEY)


def report(args, seeded, trees, counts: dict) -> None:
    print()
    print(f"{seeded.facts:,} facts over {seeded.subjects:,} subjects; {args.requests:,} counted requests per mode "
          f"and tree, after {WARM_UP} uncounted; the web process only (PostgreSQL and Redis not counted)")
    print(f"{'instructions per request':34}" + "".join(f"{name:>24}" for name, _ in trees))
    for mode in args.modes:
        print(f"{MODES[mode]:34}" + "".join(f"{counts[name, mode]:>24,}" for name, _ in trees))
    print()
    if "floor" in args.modes:
        for name, _ in trees:
            print(f"{name}: the floor's instructions / recall's: " + ", ".join(
                f"{MODES[mode]} {counts[name, 'floor'] / counts[name, mode]:.0%}" for mode in args.modes if mode != "floor"))
    if len(trees) > 1:
        (current, _), (baseline, _) = trees
        print(f"current / {baseline}: " + ", ".join(
            f"{MODES[mode]} {counts[current, mode] / counts[baseline, mode]:.3f}" for mode in args.modes))


if __name__ == "__main__":
    main()
