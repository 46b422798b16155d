"""Benchmark: GET /api/v1/recall against its floor, under the same load, in one run.

1. Seeds a separate PostgreSQL database with N published facts over M subjects (plain
   INSERT ... SELECT; default 1,000,000 facts over 100,000 subjects: ten each, over a
   `user` and a `project` entity, one of them sensitive).
2. Serves the app with gunicorn on 127.0.0.1 (bench/settings.py adds the floor view: one
   primary-key lookup of a fact, through the same middleware, on the same database), and
   a second, identical server with MEMORY_RECALL_ASYNC_COMMIT=1 (recall records committed
   without waiting for the WAL flush); each server is idle while the other is measured.
3. Drives them with wrk (Debian package `wrk`), the same connections and duration,
   alternating floor, recall and recall with asynchronous commit for a few rounds;
   random subjects and fact ids.

    python bench/recall.py [--facts 1000000 --subjects 100000] [--reuse] [--connections 16]

Targets (issue 6): recall throughput at least 50% of the floor's; recall p99 under 25 ms
at 16 connections, checked for both commit modes. Every recall writes its recall record,
as in production.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ensure_database  # noqa: E402 - after the path is set

SERVER = "postgres://postgres@127.0.0.1:5432"

# (entity, field, value, cardinality, sensitivity, category): one subject's ten facts.
FACT_TEMPLATE = [
    ("user", "name", "Person", "one", "normal", "identity"),
    ("user", "role", "engineer", "one", "normal", "identity"),
    ("user", "language", "English", "one", "normal", "identity"),
    ("user", "location", "Berlin", "one", "personal", "constraint"),
    ("user", "preference", "short answers", "many", "normal", "preference"),
    ("user", "preference", "examples in Python", "many", "normal", "preference"),
    ("user", "preference", "green tea", "many", "normal", "preference"),
    ("user", "health", "asthma", "many", "sensitive", "scenario"),
    ("project", "database", "PostgreSQL", "one", "normal", "constraint"),
    ("project", "tech_stack", "Flask", "many", "normal", "constraint"),
]

WRK_SCRIPT = """
local mode, top, key = "%(mode)s", %(top)d, "%(key)s"
local counter = 0
function setup(thread) thread:set("seed", counter); counter = counter + 1 end
function init(args) math.randomseed(os.time() + seed * 7919) end
function request()
  local n = math.random(1, top)
  if mode == "floor" then
    return wrk.format("GET", "/bench/floor?id=" .. n)
  end
  local path = "/api/v1/recall?user_id=user-" .. n
  if n %% 4 == 0 then path = path .. "&q=postgres%%20database" end
  if n %% 4 == 1 then path = path .. "&entity=project:project-" .. (n %% 1000) end
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. key})
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, ' ..
    '"errors": %%d, "non_2xx": %%d}\\n', summary.requests, summary.duration, latency:percentile(50),
    latency:percentile(99), e.connect + e.read + e.write + e.timeout, e.status))
end
"""


def seed(facts: int, subjects: int) -> None:
    """Tenant and schema through the services; subjects, entities, facts in bulk SQL."""
    from django.db import connection

    from reviews.services.tenants import tenant_create

    tenant = tenant_create(slug="bench")
    per_subject = max(1, facts // subjects)
    template = [FACT_TEMPLATE[i % len(FACT_TEMPLATE)] for i in range(per_subject)]
    rows = ", ".join(
        f"({i}, '{e}', '{f}', '{v}', '{c}', '{s}', '{cat}')" for i, (e, f, v, c, s, cat) in enumerate(template)
    )
    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO reviews_subject (tenant_id, user_id, collection_paused, created_at) "
            "SELECT %s, 'user-' || g, false, now() FROM generate_series(1, %s) g",
            [tenant.pk, subjects],
        )
        cursor.execute(
            "INSERT INTO reviews_entity (tenant_id, subject_id, entity_type, entity_id, display_name, is_new, created_at) "
            "SELECT s.tenant_id, s.id, 'user', s.user_id, '', false, now() FROM reviews_subject s WHERE s.tenant_id = %s "
            "UNION ALL "
            "SELECT s.tenant_id, s.id, 'project', 'project-' || (s.id %% 1000), 'Project ' || (s.id %% 1000), false, now() "
            "FROM reviews_subject s WHERE s.tenant_id = %s",
            [tenant.pk, tenant.pk],
        )
        low, high = cursor.execute(
            "SELECT min(id), max(id) FROM reviews_subject WHERE tenant_id = %s", [tenant.pk]
        ).fetchone()
        step = max(1, (high - low + 1) // 10)
        for start in range(low, high + 1, step):
            cursor.execute(
                f"""
                INSERT INTO reviews_fact (tenant_id, subject_id, entity_id, field, value, value_digest, cardinality,
                    sensitivity, category, confidence, kind, scope, thread_id, source, source_message_id, evidence,
                    provenance, status, version, expires_at, approved_by, created_at, updated_at)
                SELECT s.tenant_id, s.id, e.id, t.field, t.value || ' ' || t.i, md5(t.value || t.i), t.cardinality,
                    t.sensitivity, t.category, 0.97, 'fact', 'long_term', '', 'chat', 'm-' || s.id, '', '[]'::jsonb,
                    'active', 1, NULL, 'policy', now(), now()
                FROM reviews_subject s
                CROSS JOIN (VALUES {rows}) AS t(i, entity_type, field, value, cardinality, sensitivity, category)
                JOIN reviews_entity e ON e.subject_id = s.id AND e.entity_type = t.entity_type
                WHERE s.id >= %s AND s.id < %s
                """,
                [start, start + step],
            )
            done = min(start + step, high + 1) - low
            print(f"  seeded {done * per_subject:>9,} facts ({done:,} subjects)", flush=True)
        cursor.execute("ANALYZE")
    print(f"  seeding took {time.monotonic() - started:.0f} s", flush=True)


def start_server(database_url: str, workers: int, port: int, *, async_commit: bool = False) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-only-not-a-secret-" + "x" * 32,
        "MEMORY_DIGEST_KEY": "bench-only-digest-key",
        "DATABASE_CONN_MAX_AGE": "600",
        "MEMORY_API_RATE": "100000000/s",
        "LOG_LEVEL": "WARNING",
        "PYTHONWARNINGS": "ignore::UserWarning",
        "MEMORY_RECALL_ASYNC_COMMIT": "1" if async_commit else "0",
    }
    env.pop("CELERY_BROKER_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "--workers", str(workers),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "--backlog", "256"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not start")


def run_wrk(*, mode: str, port: int, top: int, key: str, connections: int, seconds: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % {"mode": mode, "top": top, "key": key})
    try:
        output = subprocess.run(
            ["wrk", "-t", "2", "-c", str(connections), "-d", f"{int(seconds)}s", "--timeout", "5s", "-s", script.name,
             f"http://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=seconds + 60, check=True,
        ).stdout
    finally:
        os.unlink(script.name)
    result = json.loads(next(line for line in output.splitlines() if line.startswith("RESULT ")).split(" ", 1)[1])
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--subjects", type=int, default=100_000)
    parser.add_argument("--database", default="mp_bench_recall")
    parser.add_argument("--reuse", action="store_true", help="Keep the seeded database of an earlier run.")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=3, help="Per slice.")
    parser.add_argument("--rounds", type=int, default=8, help="Slices of each, alternating.")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")

    database_url = f"{SERVER}/{args.database}"
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    if not args.reuse:
        print(f"Creating {args.database} and seeding {args.facts:,} facts over {args.subjects:,} subjects …", flush=True)
        ensure_database(database_url, reset=True)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True, env=os.environ)
    import django

    django.setup()
    from reviews.models import Fact, Scope, Subject, Tenant
    from reviews.services.tenants import api_key_create

    if not args.reuse:
        seed(args.facts, args.subjects)
    tenant = Tenant.objects.get(slug="bench")
    subjects = Subject.objects.filter(tenant=tenant).count()
    fact_count = Fact.objects.filter(tenant=tenant).count()
    max_fact = Fact.objects.order_by("-pk").values_list("pk", flat=True).first()
    _, key = api_key_create(tenant=tenant, scopes=[Scope.RECALL], name="bench")
    from django.db import connection

    connection.close()

    load_before = f"{os.getloadavg()[0]:.1f}"
    durable = start_server(database_url, args.workers, args.port)
    asynchronous = start_server(database_url, args.workers, args.port + 1, async_commit=True)
    # (name, port, wrk mode, highest id): the recall modes share the wrk script.
    modes = [
        ("floor", args.port, "floor", max_fact),
        ("recall", args.port, "recall", subjects),
        ("recall, async commit", args.port + 1, "recall", subjects),
    ]
    try:
        common = {"key": key, "connections": args.connections}
        for _, port, mode, top in modes:
            run_wrk(mode=mode, port=port, top=top, seconds=3, **common)  # warm up each
        results = {name: [] for name, *_ in modes}
        # Short slices, each mode in turn: a background load that drifts (other processes
        # on the machine) then weighs on all alike, and each round is compared.
        for _ in range(args.rounds):
            for name, port, mode, top in modes:
                results[name].append(run_wrk(mode=mode, port=port, top=top, seconds=args.seconds, **common))
    finally:
        for server in (durable, asynchronous):
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)

    print()
    print(f"{fact_count:,} facts over {subjects:,} subjects; gunicorn {args.workers} sync workers; "
          f"wrk {args.connections} connections; {args.rounds} rounds of {args.seconds} s slices; "
          f"loopback; {os.cpu_count()} CPUs; load average before {load_before}, after {os.getloadavg()[0]:.1f}")
    print(f"{'':21} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}   (medians over slices; p99: the worst slice)")
    summary = {}
    for name, runs in results.items():
        rps = statistics.median(run["rps"] for run in runs)
        p50 = statistics.median(run["p50_us"] for run in runs) / 1000
        p99_median = statistics.median(run["p99_us"] for run in runs) / 1000
        p99 = max(run["p99_us"] for run in runs) / 1000
        errors = sum(run["errors"] + run["non_2xx"] for run in runs)
        summary[name] = (p99_median, errors)
        print(f"{name:21} {rps:8.0f} {p50:8.2f} {p99:8.2f} {errors:7d}   (median slice p99 {p99_median:.2f})")
        print(f"{'':21} p99 per slice, ms: " + " ".join(f"{run['p99_us'] / 1000:.1f}" for run in runs))
    print()
    for name in ("recall", "recall, async commit"):
        pair_ratios = [r["rps"] / f["rps"] for f, r in zip(results["floor"], results[name])]
        ratio = statistics.median(pair_ratios)
        p99, errors = summary[name]
        ok = ratio >= 0.5 and p99 < 25 and not errors and not summary["floor"][1]
        print(f"{name}: / floor, round by round: " + " ".join(f"{value:.0%}" for value in pair_ratios))
        print(f"  throughput / floor (median of rounds) {ratio:.0%} (target >= 50%); "
              f"p99 (median of slices) {p99:.1f} ms (target < 25 ms): {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
