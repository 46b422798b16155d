"""Soak: gunicorn and a Celery worker on PostgreSQL under a mixed load; nothing may break.

Starts its own Redis (a free port), a fresh database (``memory_portal_bench_soak``, dropped
and made anew), ``gunicorn`` (``--workers``) and one Celery worker, then runs ``--clients``
processes for ``--seconds``, each mixing, on a few subjects so they collide:

* ingest: ``POST /api/v1/messages`` (three messages; extraction on the worker),
* candidates: ``POST /api/v1/candidates`` (below the auto-approval threshold: for review),
* approvals: the review API's queue for a subject, then approving its first item (a 409
  when another client decided it first, or a 404 when an erasure of the subject removed it
  in between, is the expected answer, not a failure),
* recall: ``GET /api/v1/recall`` with ``q``,
* now and then an erasure: ``DELETE /api/v1/users/{user_id}/facts``.

Then it waits for the worker to finish extracting and checks: answers 5xx (and transport
errors), p50/p99 per operation, messages stored vs accepted (a message counts as lost only
if no erasure of its subject could have removed it: none had not finished before the
message was sent), the audit chain (``verify_tenant``) and candidates decided twice (two
decision events for one candidate). Exit status 1 if any 5xx, lost message or double decision.

    python bench/soak.py [--seconds 120] [--clients 4] [--workers 3] [--subjects 6]
"""
import argparse
import json
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
DATABASE_URL = "postgres://postgres@127.0.0.1:5432/memory_portal_bench_soak"
FIXTURE = ROOT / "reviews" / "fixtures" / "demo_conversations.jsonl"
OPERATIONS = ("ingest", "candidates", "approve", "recall", "erase")
WEIGHTS = (30, 25, 25, 19, 1)

from bench import common  # noqa: E402 - after the path is set
from bench.common import ensure_database, free_port, server_env, stop, wait_until  # noqa: E402

ENV = server_env("soak", MEMORY_API_RATE="100000000/s")


def start(command: list[str], env: dict, log: Path):
    return common.start(command, env, log, ROOT)


def texts() -> list[str]:
    found = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            found += [m["content"] for m in json.loads(line)["messages"] if m["role"] == "user"]
    return found


def client_loop(number: int, base: str, key: str, run: str, subjects: int, seconds: float, queue) -> None:
    """One load process: the operations at random, every answer timed and kept."""
    import httpx

    rng, sayings = random.Random(number), texts()
    http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    timings, statuses, ingests, erasures = defaultdict(list), defaultdict(int), [], []
    deadline, n = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        operation = rng.choices(OPERATIONS, WEIGHTS)[0]
        user_id = f"user-{rng.randrange(subjects)}"
        n += 1
        started = time.monotonic()
        try:
            if operation == "ingest":
                ids = [f"{run}-{number}-{n}-{i}" for i in range(3)]
                body = {"messages": [{"id": i, "thread_id": f"t-{user_id}", "user_id": user_id, "role": "user",
                                      "content": rng.choice(sayings)} for i in ids]}
                response = http.post("/api/v1/messages", json=body)
                if response.status_code == 202:
                    ingests.append((user_id, ids, started))
            elif operation == "candidates":
                value = rng.choice(["Berlin", "Lisbon", "Osaka", "Quito"])
                response = http.post("/api/v1/candidates", json={"user_id": user_id, "candidates": [
                    {"entity_type": "user", "entity_id": user_id, "field": "location", "value": value,
                     "confidence": 0.7}]})
            elif operation == "approve":
                response = http.get("/api/v1/review/candidates", params={"user_id": user_id})
                items = response.json().get("results", []) if response.status_code == 200 else []
                if items:
                    timings["queue"].append(time.monotonic() - started)
                    statuses[("queue", response.status_code // 100)] += 1
                    started = time.monotonic()
                    item = items[0]
                    response = http.post(f"/api/v1/review/candidates/{item['id']}/approve",
                                         json={"version": item["version"]})
                else:
                    operation = "queue"
            elif operation == "recall":
                response = http.get("/api/v1/recall", params={"user_id": user_id, "q": "where do I live"})
            else:
                response = http.delete(f"/api/v1/users/{user_id}/facts")
                erasures.append((user_id, started, time.monotonic()))
            status = response.status_code
        except httpx.HTTPError as exc:
            status = f"error {type(exc).__name__}"
        timings[operation].append(time.monotonic() - started)
        statuses[(operation, status // 100 if isinstance(status, int) else status)] += 1
    queue.put({"timings": dict(timings), "statuses": dict(statuses), "ingests": ingests, "erasures": erasures})


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--clients", type=int, default=4, help="load processes")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (2-4)")
    parser.add_argument("--subjects", type=int, default=6, help="few, so that writers collide")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_SOAK_DATABASE_URL", DATABASE_URL))
    args = parser.parse_args()
    redis_server = shutil.which("redis-server") or sys.exit("redis-server not found")

    logs = ROOT / "artifacts" / "soak"
    logs.mkdir(parents=True, exist_ok=True)
    redis_port, web_port = free_port(), free_port()
    broker = f"redis://127.0.0.1:{redis_port}/0"
    os.environ.update(ENV, DATABASE_URL=args.database_url, CELERY_BROKER_URL=broker)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ensure_database(args.database_url, reset=True)

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from reviews.models import Scope
    from reviews.services.tenants import api_key_create, tenant_create

    run = f"soak-{int(time.time())}"
    tenant = tenant_create(slug=run)
    _, key = api_key_create(tenant=tenant, scopes=[Scope.INGEST, Scope.RECALL, Scope.REVIEW, Scope.ADMIN])

    processes = [start([redis_server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                        "--appendonly", "no"], env, logs / "redis.log")]
    try:
        processes.append(start([sys.executable, "-m", "celery", "-A", "memory_portal", "worker", "--concurrency", "2",
                                "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat",
                                "--hostname", f"{run}@%h"], env, logs / "worker.log"))
        processes.append(start([sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "--workers",
                                str(args.workers), "--bind", f"127.0.0.1:{web_port}", "--log-level", "warning"],
                               env, logs / "gunicorn.log"))
        import httpx

        base = f"http://127.0.0.1:{web_port}"

        def answers():
            try:
                return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, 60, "gunicorn and the broker")
        print(f"database {args.database_url.rsplit('/', 1)[1]}, tenant {run}: gunicorn x{args.workers}, "
              f"1 Celery worker, {args.clients} clients on {args.subjects} subjects for {args.seconds:.0f} s", flush=True)
        queue = multiprocessing.get_context("spawn").Queue()
        clients = [multiprocessing.get_context("spawn").Process(
            target=client_loop, args=(i, base, key, run, args.subjects, args.seconds, queue)) for i in range(args.clients)]
        for client in clients:
            client.start()
        results = [queue.get(timeout=args.seconds + 120) for _ in clients]
        for client in clients:
            client.join(10)
        from reviews.models import ExtractionStatus, Message

        def extracted():
            return not Message.objects.filter(tenant=tenant, extraction_status=ExtractionStatus.PENDING).exists()

        try:
            wait_until(extracted, 180, "the worker to extract every message")
        except SystemExit as exc:
            print(f"note: {exc}")
    finally:
        for process in reversed(processes):
            stop(process)
    sys.exit(report(tenant, results))


def report(tenant, results: list[dict]) -> int:
    from django.db.models import Count

    from reviews.audit import verify_tenant
    from reviews.models import AuditAction, AuditEvent, Message

    # Decisions on a candidate; two of them for one candidate is a double decision.
    decisions = (AuditAction.POLICY_AUTO_APPROVED, AuditAction.POLICY_REJECTED, AuditAction.CANDIDATE_APPROVED,
                 AuditAction.CANDIDATE_EDITED_APPROVED, AuditAction.CANDIDATE_REJECTED)

    timings, statuses = defaultdict(list), defaultdict(int)
    for result in results:
        for operation, values in result["timings"].items():
            timings[operation] += values
        for (operation, status), count in result["statuses"].items():
            statuses[(operation, status)] += count
    print(f"{'operation':<11} {'calls':>6} {'2xx':>6} {'4xx':>5} {'5xx':>4} {'other':>5} {'p50 ms':>8} {'p99 ms':>8}")
    server_errors = 0
    for operation in ("ingest", "candidates", "queue", "approve", "recall", "erase"):
        values = timings.get(operation, [])
        if not values:
            continue
        by_status = {status: count for (op, status), count in statuses.items() if op == operation}
        other = sum(count for status, count in by_status.items() if status not in (2, 4, 5))
        server_errors += by_status.get(5, 0) + other
        print(f"{operation:<11} {len(values):>6} {by_status.get(2, 0):>6} {by_status.get(4, 0):>5} "
              f"{by_status.get(5, 0):>4} {other:>5} {percentile(values, 0.5):>8.1f} {percentile(values, 0.99):>8.1f}")

    erasures = defaultdict(list)
    for result in results:
        for user_id, _started, ended in result["erasures"]:
            erasures[user_id].append(ended)
    stored = set(Message.objects.filter(tenant=tenant).values_list("message_id", flat=True))
    accepted = must_exist = lost = 0
    for result in results:
        for user_id, ids, started in result["ingests"]:
            accepted += len(ids)
            # An erasure still running (or started) after this message was sent may remove it.
            if all(ended < started for ended in erasures[user_id]):
                must_exist += len(ids)
                lost += sum(1 for message_id in ids if message_id not in stored)
    doubles = (
        AuditEvent.objects.filter(tenant_id=tenant.pk, object_type="candidate", action__in=decisions)
        .values("object_id").annotate(n=Count("pk")).filter(n__gt=1).count()
    )
    chain = verify_tenant(tenant.pk)
    print(f"messages: {accepted} accepted, {must_exist} not reachable by an erasure, {lost} of those lost; "
          f"{len(stored)} stored now; erasures: {sum(len(v) for v in erasures.values())}")
    print(f"audit chain: {chain.events} events, {'verifies' if chain.ok else f'BROKEN: {chain.broken}'}")
    print(f"candidates decided twice: {doubles}")
    print(f"5xx and transport errors: {server_errors}")
    failed = server_errors or lost or doubles or not chain.ok
    print("FAILED" if failed else "OK: no 5xx, nothing lost, no double decision, the chain verifies")
    return 1 if failed else 0


if __name__ == "__main__":
    main()
