"""Benchmark: CPU per recall, every process that works for it counted, against the floor's.

On a 2-core machine that runs the web workers, PostgreSQL, Redis and the load generator,
throughput is CPU-bound, so recall's throughput relative to the floor's is about the floor's
CPU per request over recall's. CPU time barely moves with what else the machine runs,
where requests per second do (bench/recall.py on a shared machine swings 2× between
slices); this script measures that CPU directly, in one process, through Django's WSGI
handler exactly as gunicorn calls it:

* the web process's CPU (``time.process_time``);
* its PostgreSQL backend's CPU (``/proc/<pg_backend_pid>/stat``: needs the database on
  this machine and permission to read the backend's stat, as root or as postgres);
* Redis's CPU (``INFO cpu``) for the stream mode, whose records are written by the drain
  in this same process every ``--batch`` recalls (50: what the drain process's 50 ms
  linger collects at 1,000 recalls/s), one batch a read as ``recall_records_drain
  --follow`` takes them, its CPU and its backend's counted as well.

Modes, alternated round by round: the floor (``bench/settings.py``'s one-row view), recall
writing its record (durable commit), recall handing its record to a Redis stream (plus the
drain). WAL flushes and replication are paid by other processes (walwriter, a replica's
replay) and are not counted: the figure is a lower bound of what a durable commit costs.

    python bench/recall_cpu.py [--facts 100000 --subjects 10000] [--requests 2000] [--rounds 3]
        [--database mp_bench_recall_cpu] [--reuse] [--redis redis://127.0.0.1:6379/0] [--batch 50]
"""
from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.recall import add_seed_arguments, prepare  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the PostgreSQL backend ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def redis_cpu(client) -> float:
    info = client.info("cpu")
    return info["used_cpu_user"] + info["used_cpu_sys"]


def request_environ(mode: str, rng: random.Random, *, subjects: int, max_fact: int, key: str) -> dict:
    """The WSGI environ of one request: the floor (a random fact) or a recall (a random
    subject; a quarter with ``q``, a quarter naming a project), as gunicorn would pass it."""
    if mode == "floor":
        path, query = "/bench/floor", f"id={rng.randint(1, max_fact)}"
    else:
        n = rng.randint(1, subjects)
        path, query = "/api/v1/recall", f"user_id=user-{n}"
        if n % 4 == 0:
            query += "&q=postgres%20database"
        elif n % 4 == 1:
            query += f"&entity=project:project-{n % 1000}"
    return {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_AUTHORIZATION": f"Bearer {key}", "REMOTE_ADDR": "127.0.0.1", "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr, "wsgi.multithread": False,
        "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
    }


def serve(handler, environ: dict) -> None:
    """One request through Django's WSGI handler, its body read and closed; anything but
    a 200 stops the benchmark."""
    statuses = []
    body = handler(environ, lambda status, headers, exc_info=None: statuses.append(status))
    b"".join(body)
    if hasattr(body, "close"):
        body.close()
    if not statuses[0].startswith("200"):
        raise SystemExit(f"{environ['PATH_INFO']}: {statuses[0]}")


# The environment of the process that serves the requests: production settings, a
# persistent connection (prepared statements), no rate limit in the way, no broker.
SERVING_ENVIRONMENT = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "bench-only-not-a-secret-" + "x" * 32,
    "MEMORY_DIGEST_KEY": "bench-only-digest-key",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    "DATABASE_CONN_MAX_AGE": "600",
    "MEMORY_API_RATE": "100000000/s",
    "LOG_LEVEL": "WARNING",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seed_arguments(parser, facts=100_000, subjects=10_000, database="mp_bench_recall_cpu")
    parser.add_argument("--requests", type=int, default=2000, help="Per mode and round.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--batch", type=int, default=50,
                        help="Drain after this many recalls: the drain process's 50 ms linger at 1,000 recalls/s.")
    args = parser.parse_args()

    os.environ.update(SERVING_ENVIRONMENT)
    os.environ.pop("CELERY_BROKER_URL", None)
    seeded = prepare(args, key_name="bench-cpu")
    import redis
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection

    from reviews.models import RecallRecord
    from reviews.recall.records import recall_records_drain

    subjects, max_fact, key = seeded.subjects, seeded.max_fact, seeded.key
    stream_key = f"bench:recall-cpu:{os.getpid()}"
    redis_client = redis.Redis.from_url(args.redis)
    handler = WSGIHandler()
    rng = random.Random(7)

    def request(mode: str) -> None:
        serve(handler, request_environ(mode, rng, subjects=subjects, max_fact=max_fact, key=key))

    def measure(mode: str, requests: int) -> dict:
        settings.MEMORY_RECALL_RECORD_STREAM_URL = args.redis if mode == "stream" else ""
        settings.MEMORY_RECALL_RECORD_STREAM_KEY = stream_key
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        records_before = RecallRecord.objects.count() if mode == "stream" else 0
        web0, db0, redis0, wall0 = time.process_time(), backend_cpu(pid), redis_cpu(redis_client), time.perf_counter()
        drained = 0
        for number in range(1, requests + 1):
            request("recall" if mode != "floor" else "floor")
            if mode == "stream" and number % args.batch == 0:
                # As the follow mode drains: one read of the stream per batch, no look for
                # entries another drain left (it does that every few seconds).
                drained += recall_records_drain(max_batches=1, take_over=False).written
        wall = time.perf_counter() - wall0
        if mode == "stream":
            drained += recall_records_drain().written
            if RecallRecord.objects.count() - records_before != requests:
                raise SystemExit("the drain did not write every record")
        web, db = time.process_time() - web0, backend_cpu(pid) - db0
        cache = redis_cpu(redis_client) - redis0 if mode == "stream" else 0.0
        per = 1e6 / requests
        return {"web": web * per, "db": db * per, "redis": cache * per, "total": (web + db + cache) * per,
                "wall": wall * per, "drained": drained}

    modes = ["floor", "recall", "stream"]
    names = {"floor": "floor", "recall": "recall, record written", "stream": "recall, records via stream"}
    for mode in modes:  # warm up: connections, prepared statements, caches
        measure(mode, 200)
    results = {mode: [] for mode in modes}
    for _ in range(args.rounds):
        for mode in modes:
            results[mode].append(measure(mode, args.requests))
    redis_client.delete(stream_key, f"{stream_key}:dead")

    print()
    print(f"{seeded.facts:,} facts over {subjects:,} subjects; {args.requests:,} requests "
          f"per mode and round, {args.rounds} rounds; one process through WSGIHandler")
    print(f"{'µs of CPU per request':30} {'web':>7} {'db':>7} {'redis':>7} {'total':>7} {'wall':>7}   (medians of rounds)")
    medians = {}
    for mode in modes:
        row = {part: statistics.median(run[part] for run in results[mode]) for part in ("web", "db", "redis", "total", "wall")}
        medians[mode] = row
        print(f"{names[mode]:30} {row['web']:7.0f} {row['db']:7.0f} {row['redis']:7.0f} {row['total']:7.0f} {row['wall']:7.0f}")
    print()
    for mode in ("recall", "stream"):
        by_round = [floor["total"] / run["total"] for floor, run in zip(results["floor"], results[mode])]
        print(f"{names[mode]}: floor's CPU / its CPU, round by round " + " ".join(f"{value:.0%}" for value in by_round)
              + f" (median {statistics.median(by_round):.0%}): the throughput ratio a CPU-bound machine would give")
    saved = [a["total"] / b["total"] for a, b in zip(results["stream"], results["recall"])]
    print(f"stream / record written, CPU per recall, round by round: " + " ".join(f"{value:.2f}" for value in saved))


if __name__ == "__main__":
    main()
