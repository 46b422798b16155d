"""Benchmark: candidates per second through the policy pipeline into PostgreSQL.

Submits batches of 100 candidates (one subject per batch, a realistic mix of outcomes:
auto-approvals, merges, conflicts, pending items, rejections, credentials) through
``candidates_submit`` (the service the API calls), in its own database. The projection
each commit enqueues goes to a broker as in production (``--broker``, default
``memory://``: published by the background lane, never run here), so this measures the
policy and its writes, not the LangGraph Store's.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memory_portal_bench python bench/policy.py [--batches 50]

Target (issue 2): at least 1,000 candidates per second on 2 cores.
"""
import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/memory_portal_bench")
# DEBUG off, as in production (no query log); its key must then be set: the bench's own.
os.environ["DJANGO_DEBUG"] = "0"
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-policy-secret-key-not-for-production")
os.environ.setdefault("MEMORY_DIGEST_KEY", "bench-policy-digest-key-not-for-production")

from bench.common import ensure_database, publish_tasks_to  # noqa: E402 - after the path is set


def make_batch(rng: random.Random, n: int):
    from reviews.domain import CandidateInput

    shapes = [
        ("user", "me", "name", ["Alice", "alice", "Alicia"]),
        ("user", "me", "preference", ["Python", "short answers", "tests first", "production examples"]),
        ("user", "me", "location", ["Berlin", "广州"]),
        ("project", "flask", "database", ["MySQL", "PostgreSQL"]),
        ("project", "flask", "tech_stack", ["Flask", "Celery", "Redis", "SQLAlchemy"]),
        ("user", "me", "health", ["diabetes"]),
        ("user", "me", "preference", ["my key is sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"]),
        ("user", "me", "shoe_size", ["42"]),
    ]
    batch = []
    for _ in range(n):
        entity_type, entity_id, field, values = rng.choice(shapes)
        batch.append(
            CandidateInput(
                entity_type=entity_type,
                entity_id=entity_id,
                field=field,
                value=rng.choice(values),
                confidence=rng.choice([0.4, 0.7, 0.9, 0.96, 0.99]),
                supersedes=rng.random() < 0.2,
                evidence="from the benchmark",
            )
        )
    return batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--broker", default="memory://", help="where the projection tasks are published")
    args = parser.parse_args()
    ensure_database(os.environ["DATABASE_URL"])

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from reviews.background import publisher

    publish_tasks_to(args.broker)
    from reviews.actors import Actor
    from reviews.models import Candidate, Tenant
    from reviews.services.candidates import candidates_submit
    from reviews.services.tenants import tenant_create

    slug = f"bench-{int(time.time())}"
    tenant = tenant_create(slug=slug)
    rng = random.Random(42)
    batches = [make_batch(rng, args.batch_size) for _ in range(args.batches)]
    actor = Actor("api_key", "bench")

    # Warm-up batch (connections, caches), not counted.
    candidates_submit(tenant=tenant, user_id="warmup", candidates=batches[0], source="chat", actor=actor)
    start = time.perf_counter()
    for index, batch in enumerate(batches):
        candidates_submit(tenant=tenant, user_id=f"user-{index % 20}", candidates=batch, source="chat", actor=actor)
    elapsed = time.perf_counter() - start
    publisher.drain()
    total = args.batches * args.batch_size
    outcomes = Candidate.objects.filter(tenant=tenant).exclude(subject__user_id="warmup")
    print(f"candidates: {total} in {args.batches} batches of {args.batch_size}")
    print(f"elapsed: {elapsed:.2f} s")
    print(f"throughput: {total / elapsed:,.0f} candidates/s (target >= 1,000)")
    from django.db.models import Count

    mix = dict(outcomes.values_list("status").annotate(n=Count("id")).order_by())
    print("outcome mix:", ", ".join(f"{k}={v}" for k, v in sorted(mix.items())))
    Tenant.objects.filter(pk=tenant.pk)  # kept for inspection; the bench database is disposable


if __name__ == "__main__":
    main()
