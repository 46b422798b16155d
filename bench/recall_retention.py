"""Benchmark: the recall records' retention sweep while recall runs under load.

1. A separate PostgreSQL database with a small memory (facts as bench/recall.py seeds
   them) and N recall records (default 10,000,000) spread evenly over the last D days
   (default 120), written with generate_series, one INSERT per day, into their daily
   partitions (reviews/recall/partitions.py).
2. gunicorn serves the app on 127.0.0.1; wrk drives GET /api/v1/recall at 16 connections
   (every call also writes its recall record, into today's partition).
3. Slices before the sweep, then one slice during which the sweep runs
   (``recall_partitions_drop_expired`` with MEMORY_RECALL_RETENTION_DAYS, default 90: it
   drops every day older than that, DETACH … CONCURRENTLY then DROP), then one after.

    python bench/recall_retention.py [--records 10000000 --days 120] [--reuse]

Target (issue 17): recall p99 during the sweep within 20% of before.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ensure_database  # noqa: E402
from bench.recall import SERVER, add_seed_arguments, run_wrk, seed, start_server  # noqa: E402


def seed_records(tenant_id: int, subjects: int, records: int, days: int) -> None:
    """``records`` recall records over the last ``days`` days, one INSERT per day."""
    from django.db import connection
    from django.utils import timezone

    from reviews.recall.partitions import recall_partitions_ensure

    today = timezone.now().date()
    recall_partitions_ensure(today=today - timedelta(days=days), ahead_days=days + 7)
    per_day = records // days
    started = time.monotonic()
    with connection.cursor() as cursor:
        for back in range(days, 0, -1):
            day = today - timedelta(days=back)
            cursor.execute(
                "INSERT INTO reviews_recallrecord (tenant_id, user_id, caller, query, facts, created_at) "
                "SELECT %s, 'user-' || (1 + g %% %s), 'api_key:bench', "
                "'{\"q\": \"\", \"entity\": [], \"field\": [], \"limit\": 50, \"explain\": false, "
                "\"thread_id\": \"\", \"include_sensitive\": false}'::jsonb, "
                "jsonb_build_array(jsonb_build_object('id', g, 'version', 1), jsonb_build_object('id', g + 1, 'version', 1)), "
                "%s::timestamptz + (g * (86400.0 / %s)) * interval '1 second' "
                "FROM generate_series(0, %s - 1) g",
                [tenant_id, subjects, f"{day.isoformat()} 00:00:00+00", per_day, per_day],
            )
            done = (days - back + 1) * per_day
            if back % 10 == 0 or back == 1:
                print(f"  {done:>11,} recall records ({time.monotonic() - started:.0f} s)", flush=True)
        cursor.execute("ANALYZE reviews_recallrecord")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--retention-days", type=int, default=90)
    add_seed_arguments(parser, facts=100_000, subjects=10_000, database="mp_bench_recall_retention")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=5, help="Per slice before the sweep.")
    parser.add_argument("--rounds", type=int, default=4, help="Slices before the sweep.")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=8775)
    args = parser.parse_args()

    database_url = f"{SERVER}/{args.database}"
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    if not args.reuse:
        print(f"Creating {args.database}: {args.facts:,} facts, {args.records:,} recall records over "
              f"{args.days} days …", flush=True)
        ensure_database(database_url, reset=True)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True, env=os.environ)
    import django

    django.setup()
    from django.db import connection

    from reviews.models import Scope, Subject, Tenant
    from reviews.recall.partitions import partitions, recall_partitions_drop_expired
    from reviews.services.tenants import api_key_create

    if not args.reuse:
        seed(args.facts, args.subjects)
        seed_records(Tenant.objects.get(slug="bench").pk, args.subjects, args.records, args.days)
    tenant = Tenant.objects.get(slug="bench")
    subjects = Subject.objects.filter(tenant=tenant).count()
    _, key = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="bench")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM reviews_recallrecord")
        records_before = cursor.fetchone()[0]
    partitions_before = len(partitions())
    connection.close()

    server = start_server(database_url, ROOT, args.port, {"workers": args.workers})
    common = {"mode": "recall", "port": args.port, "top": subjects, "key": key, "connections": args.connections}
    sweep = {}

    def run_sweep():
        time.sleep(1)  # the slice is under way first
        started = time.monotonic()
        sweep["dropped"] = recall_partitions_drop_expired(retention_days=args.retention_days)
        sweep["seconds"] = time.monotonic() - started
        connection.close()

    try:
        run_wrk(seconds=3, **common)  # warm up
        before = [run_wrk(seconds=args.seconds, **common) for _ in range(args.rounds)]
        worker = threading.Thread(target=run_sweep)
        worker.start()
        during = run_wrk(seconds=max(args.seconds, 4), **common)
        worker.join()
        after = run_wrk(seconds=args.seconds, **common)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM reviews_recallrecord")
        records_after = cursor.fetchone()[0]
    print()
    print(f"{records_before:,} recall records in {partitions_before} partitions; gunicorn {args.workers} sync workers; "
          f"wrk {args.connections} connections; {os.cpu_count()} CPUs")
    print(f"sweep: {len(sweep['dropped'])} partitions dropped in {sweep['seconds']:.2f} s; "
          f"{records_before - records_after:,} records gone (plus the load's own), {records_after:,} left")
    print(f"{'':14} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for name, runs in (("before", before), ("during sweep", [during]), ("after", [after])):
        print(f"{name:14} {statistics.median(r['rps'] for r in runs):8.0f} "
              f"{statistics.median(r['p50_us'] for r in runs) / 1000:8.2f} "
              f"{statistics.median(r['p99_us'] for r in runs) / 1000:8.2f} "
              f"{sum(r['errors'] + r['non_2xx'] for r in runs):7d}")
    p99_before = statistics.median(r["p99_us"] for r in before)
    ratio = during["p99_us"] / p99_before
    print(f"\np99 during the sweep / before (median of {len(before)} slices): {ratio:.2f} "
          f"(target <= 1.20): {'met' if ratio <= 1.2 else 'MISSED'}")


if __name__ == "__main__":
    main()
