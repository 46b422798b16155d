"""Benchmark: messages accepted per second through the API, and extracted per second.

1. **Accepted**: ``POST /api/v1/messages`` in batches of 100 (the real view, serializer,
   service and audit, through Django's test client, on PostgreSQL), messages spread over
   50 subjects, one in ten carrying a credential to mask. Extraction tasks go to a broker
   (``--broker``, default ``memory://``: published, never run), so this measures what a
   request does. Target: 1,000 messages/s.
2. **Rule extractor**: ``RuleExtractor.extract`` alone over the demo conversations (with
   their thread history), in this one process, in wall time and in this process's CPU time
   (``time.process_time``: what a core spends, honest on a shared machine), then
   ``rules-1`` (from the repository's history) the same way for the ratio. Target: 2,000
   messages per CPU second.
3. **Pipeline**: ``message_extract`` over stored messages: context from the database,
   extraction, the policy and the candidates, the audit events — what one worker process
   does per message.

    python bench/ingest.py [--batches 100] [--extract 2000] [--broker memory://]

The database (``DATABASE_URL``, default ``memory_portal_bench_ingest`` on the local server)
is created if missing and kept for inspection; each run uses a fresh tenant.
"""
import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/memory_portal_bench_ingest")
# DEBUG off (no query log); its key must then be set: the bench's own.
os.environ["DJANGO_DEBUG"] = "0"
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-ingest-secret-key-not-for-production")
os.environ.setdefault("MEMORY_DIGEST_KEY", "bench-ingest-digest-key-not-for-production")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("MEMORY_API_RATE", "1000000/min")
FIXTURE = ROOT / "reviews" / "fixtures" / "demo_conversations.jsonl"
SUBJECTS = 50

from bench.common import ensure_database, publish_tasks_to  # noqa: E402 - after the environment above is set


def fixture_texts() -> list[str]:
    texts = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            texts += [m["content"] for m in json.loads(line)["messages"] if m["role"] == "user"]
    return texts


def make_batches(run: str, batches: int, size: int) -> list[dict]:
    rng = random.Random(7)
    texts = fixture_texts()
    bodies, n = [], 0
    for _ in range(batches):
        messages = []
        for _ in range(size):
            n += 1
            subject = rng.randrange(SUBJECTS)
            content = rng.choice(texts)
            if n % 10 == 0:
                content += " My password is hunter2-bench, keep it."
            messages.append(
                {"id": f"{run}-{n}", "thread_id": f"t-{subject}-{n // 500}", "user_id": f"user-{subject}",
                 "role": "user", "content": content}
            )
        bodies.append({"messages": messages})
    return bodies


def bench_accept(tenant, bodies, broker: str) -> None:
    from django.test import Client

    from reviews.models import Scope
    from reviews.services.ingest import extractions_drain
    from reviews.services.tenants import api_key_create

    publish_tasks_to(broker)
    _, raw_key = api_key_create(tenant=tenant, scopes=[Scope.INGEST])
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    post = lambda body: client.post("/api/v1/messages", data=json.dumps(body), content_type="application/json")  # noqa: E731

    warm = post({"messages": [dict(m, id=f"warm-{m['id']}") for m in bodies[0]["messages"]]})
    assert warm.status_code == 202, warm.content
    accepted = 0
    start = time.perf_counter()
    for body in bodies:
        response = post(body)
        assert response.status_code == 202, response.content
        accepted += response.json()["accepted"]
    elapsed = time.perf_counter() - start
    drain_start = time.perf_counter()
    extractions_drain()
    drained = time.perf_counter() - drain_start
    size = len(bodies[0]["messages"])
    print(f"[accept]    {accepted} messages in {len(bodies)} requests of {size} in {elapsed:.2f} s")
    print(f"[accept]    {accepted / elapsed:,.0f} messages accepted/s (target >= 1,000); "
          f"{len(bodies) / elapsed:,.1f} requests/s; tasks still being published after the last answer: {drained:.2f} s")


# The rule extractor as it was before its statements became data, for the ratio.
RULES_1_COMMIT = "b58ab76^"
# Modules rules-1 imports that have moved since (the layout into reviews/policy), to their homes now.
RULES_1_MOVED_IMPORTS = {"from ..normalize import": "from ..policy.normalize import"}


def rules_1_extractor():
    """``rules-1`` loaded from the repository's history (None without git or history)."""
    import importlib.util
    import subprocess

    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{RULES_1_COMMIT}:reviews/extraction/rules.py"],
            capture_output=True, text=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for then, now in RULES_1_MOVED_IMPORTS.items():
        source = source.replace(then, now)
    spec = importlib.util.spec_from_loader("reviews.extraction._rules_1", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "reviews.extraction"
    sys.modules[spec.name] = module  # its dataclasses look their module up
    exec(compile(source, "rules-1", "exec"), module.__dict__)  # noqa: S102 - the project's own history
    return module.RuleExtractor()


def _time_rules(extractor, contexts, seconds: float) -> tuple[int, int, float, float]:
    """Messages done, candidates found, wall seconds and CPU seconds of this process."""
    done = found = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        for context in contexts:
            found += len(extractor.extract(context).candidates)
            done += 1
    return done, found, time.perf_counter() - start, time.process_time() - cpu_start


def bench_rules(seconds: float) -> None:
    from reviews.extraction.base import ExtractionContext, PriorMessage
    from reviews.extraction.rules import RULES_VERSION, RuleExtractor
    from reviews.secrets import mask_secrets

    contexts = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        conversation, history = json.loads(line), []
        for m in conversation["messages"]:
            content = mask_secrets(m["content"]).text
            contexts.append(ExtractionContext(
                user_id=conversation["user_id"], thread_id=conversation["thread_id"], message_id=m["id"],
                role=m["role"], content=content, thread_history=tuple(history),
            ))
            history.append(PriorMessage(m["id"], m["role"], content))
    # One pass first, untimed but reported: the first Chinese message sets up jieba's
    # dictionary, once per process (reviews/extraction/segment.py), not per message.
    extractor = RuleExtractor()
    setup_start, setup_cpu = time.perf_counter(), time.process_time()
    for context in contexts:
        extractor.extract(context)
    print(f"[rules]     {RULES_VERSION}: first pass (jieba's dictionary set up once per process) "
          f"{time.perf_counter() - setup_start:.2f} s wall, {time.process_time() - setup_cpu:.2f} s CPU")
    # Wall time counts the waits of a shared machine; CPU time (this process's) is per core.
    done, found, wall, cpu = _time_rules(extractor, contexts, seconds)
    print(f"[rules]     {RULES_VERSION}: {done:,} messages in {wall:.2f} s wall, {cpu:.2f} s CPU: "
          f"{done / wall:,.0f} messages/s wall, {done / cpu:,.0f} per CPU second (target >= 2,000 per core); "
          f"{cpu / done * 1e6:,.0f} µs CPU per message; {found / done:.2f} candidates per message")
    before = rules_1_extractor()
    if before is None:
        print("[rules]     rules-1: not in this checkout's history, no ratio")
        return
    done_1, _, wall_1, cpu_1 = _time_rules(before, contexts, seconds)
    print(f"[rules]     rules-1, same run: {done_1 / wall_1:,.0f} messages/s wall, {done_1 / cpu_1:,.0f} per CPU second; "
          f"{RULES_VERSION} / rules-1 per CPU second: {(done / cpu) / (done_1 / cpu_1):.2f}")


def bench_pipeline(tenant, limit: int) -> None:
    from reviews.extraction.rules import RuleExtractor
    from reviews.models import Candidate, ExtractionStatus, Message
    from reviews.services.ingest import message_extract

    pks = list(
        Message.objects.filter(tenant=tenant, extraction_status=ExtractionStatus.PENDING)
        .order_by("created_at", "pk").values_list("pk", flat=True)[:limit]
    )
    extractor = RuleExtractor()
    start = time.perf_counter()
    for pk in pks:
        message_extract(message_pk=pk, extractor=extractor)
    elapsed = time.perf_counter() - start
    candidates = Candidate.objects.filter(tenant=tenant).count()
    print(f"[pipeline]  {len(pks)} messages extracted into {candidates} candidates in {elapsed:.2f} s, one process: "
          f"{len(pks) / elapsed:,.0f} messages/s ({candidates / elapsed:,.0f} candidates/s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--extract", type=int, default=2000, help="messages through the full pipeline")
    parser.add_argument("--rules-seconds", type=float, default=3.0)
    parser.add_argument("--rules-only", action="store_true", help="only the rule extractor (no database)")
    parser.add_argument("--broker", default="memory://", help="where extraction tasks are published")
    args = parser.parse_args()
    if args.rules_only:
        import django

        django.setup()
        bench_rules(args.rules_seconds)
        return
    ensure_database(os.environ["DATABASE_URL"])

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from reviews.services.tenants import tenant_create

    run = f"bench-{int(time.time())}"
    tenant = tenant_create(slug=run)
    print(f"database {os.environ['DATABASE_URL'].rsplit('/', 1)[1]}, tenant {run}, {os.cpu_count()} CPU(s)")
    bench_accept(tenant, make_batches(run, args.batches, args.batch_size), args.broker)
    bench_rules(args.rules_seconds)
    bench_pipeline(tenant, args.extract)


if __name__ == "__main__":
    main()
