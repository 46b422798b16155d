"""Benchmark: stream an audit export of N events and watch the process's memory.

1. Seeds a separate PostgreSQL database with a tenant whose chain holds N events (default
   1,000,000): hashes computed exactly as ``reviews.audit`` does, each event with a
   readable payload whose digests match, loaded with COPY. ``--reuse`` keeps a database
   that already holds them.
2. Streams ``GET /api/v1/audit/export`` (JSON Lines, or ``--format csv``) through the real
   API view with an admin key, writing the body to a file; a thread samples the RSS every
   5 ms.
3. Prints rows per second, the peak RSS growth over the baseline before the request
   (target: under 50 MB), and checks the manifest against the database: row count and
   chain head hash. ``--verify`` also verifies the file (every hash, link and digest).

    python bench/export.py [--events 1000000] [--reuse] [--format jsonl|csv] [--verify]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ensure_database  # noqa: E402 - after the path is set

SERVER = "postgres://postgres@127.0.0.1:5432"
DATABASE = "memory_portal_bench_export"
TENANT = "bench-export"
ACTIONS = ["candidate.submitted", "policy.auto_approved", "fact.created", "fact.edited", "fact.deleted"]
ACTORS = ["api_key:bench", "policy", "reviewer:1", "subject:user-1", "system"]
COPY_BATCH = 50_000


def setup_django(name: str) -> None:
    os.environ["DATABASE_URL"] = f"{SERVER}/{name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
    # DEBUG off: no query log; its key must then be set (the bench's own, digests included).
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-export-secret-key-not-for-production")
    os.environ.setdefault("MEMORY_DIGEST_KEY", "bench-export-digest-key-not-for-production")
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()


def seed(events: int) -> None:
    """Append ``events`` events to the bench tenant's chain, exactly as record_many would."""
    from django.core.management import call_command
    from django.db import connection, transaction

    from reviews.audit import event_hash
    from reviews.models import AuditChainHead, Tenant
    from reviews.policy.normalize import keyed_digest as digest
    from reviews.services.tenants import tenant_create

    call_command("migrate", verbosity=0)
    tenant = Tenant.objects.filter(slug=TENANT).first() or tenant_create(slug=TENANT)

    head = AuditChainHead.objects.get(tenant_id=tenant.pk)
    seq, prev = head.seq, head.hash
    base = datetime(2025, 1, 1, tzinfo=timezone.utc)
    columns = (
        "tenant_id, seq, created_at, actor, action, object_type, object_id, subject_user_id, before_digest, "
        "after_digest, reason_digest, reason_code, request_id, prev_hash, hash"
    )
    started = time.perf_counter()
    target = seq + events
    while seq < target:
        batch_end = min(seq + COPY_BATCH, target)
        event_rows, payload_rows = [], []
        for n in range(seq + 1, batch_end + 1):
            after = {"field": "preference", "value": f"value number {n}", "version": 1}
            reason = "bench" if n % 10 == 0 else ""
            event = SimpleNamespace(
                tenant_id=tenant.pk,
                seq=n,
                created_at=base + timedelta(milliseconds=n),
                actor=ACTORS[n % len(ACTORS)],
                action=ACTIONS[n % len(ACTIONS)],
                object_type="fact",
                object_id=str(n % 50_000),
                subject_user_id=f"user-{n % 10_000}",
                before_digest="",
                after_digest=digest(after),
                reason_digest=digest(reason),
                reason_code="",
                request_id="",
            )
            event.hash = event_hash(prev_hash=prev, event=event)
            event_rows.append(
                (
                    event.tenant_id, n, event.created_at, event.actor, event.action, event.object_type,
                    event.object_id, event.subject_user_id, "", event.after_digest, event.reason_digest, "", "",
                    prev, event.hash,
                )
            )
            payload_rows.append((n, event.subject_user_id, json.dumps(after), reason))
            prev = event.hash
        with transaction.atomic(), connection.cursor() as cursor:
            with cursor.cursor.copy(f"COPY reviews_auditevent ({columns}) FROM STDIN") as copy:
                for row in event_rows:
                    copy.write_row(row)
            # Payloads join their events by (tenant, seq) → id, as record_many's bulk_create does.
            cursor.execute(
                "CREATE TEMP TABLE bench_payload (seq bigint, subject text, after jsonb, reason text) ON COMMIT DROP"
            )
            with cursor.cursor.copy("COPY bench_payload FROM STDIN") as copy:
                for row in payload_rows:
                    copy.write_row(row)
            cursor.execute(
                "INSERT INTO reviews_auditpayload (event_id, tenant_id, subject_user_id, before, after, reason) "
                "SELECT e.id, e.tenant_id, p.subject, NULL, p.after, p.reason FROM bench_payload p "
                "JOIN reviews_auditevent e ON e.tenant_id = %s AND e.seq = p.seq",
                [tenant.pk],
            )
            AuditChainHead.objects.filter(tenant_id=tenant.pk).update(seq=batch_end, hash=prev)
        seq = batch_end
        print(f"  seeded {seq:,} events ({time.perf_counter() - started:.0f} s)", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE reviews_auditevent; ANALYZE reviews_auditpayload")


class PeakRss(threading.Thread):
    def __init__(self, interval: float = 0.005):
        import psutil

        super().__init__(daemon=True)
        self.process = psutil.Process()
        self.interval = interval
        self.baseline = self.peak = self.process.memory_info().rss
        self.running = True

    def run(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.interval)

    def stop(self) -> int:
        self.running = False
        self.join()
        return self.peak - self.baseline


def run_export(fmt: str, out: Path) -> tuple[int, float, int, dict]:
    """(bytes, seconds, peak RSS growth, manifest) of one streamed export through the API."""
    import gc

    from django.test import Client

    from reviews.models import Scope, Tenant
    from reviews.services.tenants import api_key_create

    tenant = Tenant.objects.get(slug=TENANT)
    _, raw_key = api_key_create(tenant=tenant, scopes=[Scope.ADMIN], name="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    client.get("/api/v1/audit/export", {"format": fmt, "since": "2999-01-01T00:00:00Z"})  # warm imports
    gc.collect()
    sampler = PeakRss()
    sampler.start()
    started = time.perf_counter()
    size, tail = 0, b""
    response = client.get("/api/v1/audit/export", {"format": fmt})
    assert response.status_code == 200, response.content
    with out.open("wb") as sink:
        for chunk in response.streaming_content:
            sink.write(chunk)
            size += len(chunk)
            tail = (tail + chunk)[-65536:]
    seconds = time.perf_counter() - started
    growth = sampler.stop()
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode()
    manifest = json.loads(last)["manifest"] if fmt == "jsonl" else json.loads(next(csv.reader([last]))[1])
    return size, seconds, growth, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--reuse", action="store_true", help="Keep the bench database if it has enough events.")
    parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    parser.add_argument("--verify", action="store_true", help="Also verify the exported file.")
    args = parser.parse_args()

    ensure_database(f"{SERVER}/{DATABASE}", reset=not args.reuse)
    setup_django(DATABASE)
    from reviews.models import AuditChainHead, AuditEvent, Tenant

    tenant = Tenant.objects.filter(slug=TENANT).first() if args.reuse else None
    have = AuditEvent.objects.filter(tenant_id=tenant.pk).count() if tenant else 0
    if have < args.events:
        print(f"seeding {args.events - have:,} audit events into {DATABASE} …", flush=True)
        seed(args.events - have)
    tenant = Tenant.objects.get(slug=TENANT)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"audit.{args.format}"
        size, seconds, growth, manifest = run_export(args.format, out)
        head = AuditChainHead.objects.get(tenant_id=tenant.pk)
        stored = AuditEvent.objects.filter(tenant_id=tenant.pk, seq__lte=manifest["chain_head"]["seq"]).count()
        rows = manifest["rows"]
        print(f"format            {args.format}")
        print(f"rows exported     {rows:,} ({size / 1e6:,.0f} MB)")
        print(f"time              {seconds:.1f} s")
        print(f"rows per second   {rows / seconds:,.0f}")
        print(f"peak RSS growth   {growth / 2**20:.1f} MB (target < 50 MB)")
        print(f"manifest rows     {rows:,} == events in the database up to its head: {stored:,} -> {rows == stored}")
        print(
            f"manifest head     #{manifest['chain_head']['seq']} {manifest['chain_head']['hash'][:16]}… == "
            f"database head #{head.seq} {head.hash[:16]}… -> {manifest['chain_head']['hash'] == head.hash}"
        )
        if args.verify:
            from reviews.exports import verify_export_file

            started = time.perf_counter()
            with out.open("rb") as stream:
                result = verify_export_file(stream)
            print(
                f"verify            {'ok' if result.ok else result.problems[:3]} "
                f"({result.rows / (time.perf_counter() - started):,.0f} rows/s)"
            )
        ok = rows == stored and manifest["chain_head"]["hash"] == head.hash and growth < 50 * 2**20
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
