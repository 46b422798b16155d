"""Benchmark: the review queue on 1,000,000 candidates across 1,000 subjects.

Seeds its own PostgreSQL database with set-based SQL (generate_series: subjects, entities,
200,000 messages, facts, 1,000,000 candidates in a realistic mix of statuses), then times,
in-process, the first and the 200th page of the queue with and without filters:

* ``selector``: ``review_queue_page`` + ``review_queue_items``, everything the page reads
  (the candidates, the source messages and their neighbours, the current facts, the schema);
* ``view``: the whole page through Django's test client (session, auth, rendering).

    python bench/review_queue.py [--candidates 1000000] [--iterations 200] [--cases TEXT] [--reseed] [--gc-freeze]
    python bench/review_queue.py --candidates 20000 --iterations 20      # a quick check

The seeded database is reused while it holds the asked number of candidates (``--reseed``
seeds it again); each size has its own database, so a quick check never costs the big seed.

Issue 13 adds search (``q``: trigram indexes on PostgreSQL), the sorts, the contested flag,
and claims as a team leaves them: before the cases run, eight colleagues and the measured
reviewer each claim items through ``candidates_claim`` (live leases on about 1,000 items
spread over several filters), and one waiting item in twenty carries a lease that expired
earlier in the day. The cases then read past colleagues' claims (the default pool view),
the reviewer's own claims (``claims=mine``), everyone's (``claims=all``), and claiming itself.
Laying the claims down rewrites some 50,000 rows, so the table is vacuumed before timing
(what autovacuum does on a server; it is off on the development machine).

The HTML page does not count: once shown it asks for its headline (waiting, in this filter,
contested, claimed by you, the oldest item: one query, each count stopping at 1,000) with
``GET /review/counts``, timed here as its own column (page 1: the counts are the same for
every page of a filter).

Target (issues 4 and 13): median under 50 ms and p99 under 150 ms.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from bench.common import ensure_database  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DEFAULT_NAME = "memory_portal_bench_queue"
TENANT = "bench-queue"
SUBJECTS = 1_000
CANDIDATES = 1_000_000
PAGE = 50
DEEP_PAGE = 200


# Ten field shapes, cycled by i % 10; conflicts only where a fact is seeded (k in 0, 3, 7).
FIELDS_SQL = """
    (VALUES (0, 'user', 'name'), (1, 'user', 'role'), (2, 'user', 'language'), (3, 'user', 'location'),
            (4, 'user', 'preference'), (5, 'user', 'preference'), (6, 'user', 'health'),
            (7, 'project', 'database'), (8, 'project', 'status'), (9, 'project', 'tech_stack')) AS f(k, entity_type, field)
"""

SEED_SQL = [
    # Subjects.
    """
    INSERT INTO reviews_subject (tenant_id, user_id, collection_paused, created_at)
    SELECT %(tenant)s, 'user-' || s, false, now() FROM generate_series(0, %(subjects)s - 1) s
    """,
    # A user entity and two projects per subject; one project in ten is new.
    """
    INSERT INTO reviews_entity (tenant_id, subject_id, entity_type, entity_id, display_name, is_new, created_at)
    SELECT %(tenant)s, subj.id, e.entity_type,
           CASE WHEN e.entity_type = 'user' THEN subj.user_id ELSE e.slug END, e.slug,
           e.slug = 'p2' AND subj.id %% 10 = 0, now()
    FROM reviews_subject subj
    CROSS JOIN (VALUES ('user', 'me'), ('project', 'p1'), ('project', 'p2')) AS e(entity_type, slug)
    WHERE subj.tenant_id = %(tenant)s
    """,
    # 20 threads of 10 messages per subject.
    """
    INSERT INTO reviews_message (tenant_id, subject_id, message_id, thread_id, role, content, created_at,
                                 received_at, extraction_status, extraction_attempts, extraction_error, extracted_at,
                                 extraction_dropped, extractor, prompt_version)
    SELECT %(tenant)s, subj.id, subj.user_id || '-t' || t || '-m' || m, subj.user_id || '-t' || t,
           CASE WHEN m %% 2 = 0 THEN 'assistant' ELSE 'user' END,
           'In thread ' || t || ', message ' || m || ': I really like topic ' || (t * 10 + m) || ', by the way.',
           now() - interval '40 days' + t * interval '1 day' + m * interval '1 minute', now(), 'done', 1, '', now(),
           0, 'rules', 'v1'
    FROM reviews_subject subj, generate_series(1, 20) t, generate_series(1, 10) m
    WHERE subj.tenant_id = %(tenant)s
    """,
    # Published facts the conflicts point at: name and location of the user, database of p1.
    """
    INSERT INTO reviews_fact (tenant_id, subject_id, entity_id, field, value, value_digest, cardinality, sensitivity,
                              category, confidence, kind, scope, thread_id, source, source_message_id, evidence,
                              provenance, status, version, approved_by, created_at, updated_at)
    SELECT %(tenant)s, e.subject_id, e.id, f.field, f.value || ' ' || e.subject_id, md5(f.field || e.id), 'one',
           f.sensitivity, f.category, 0.97, 'fact', 'long_term', '', 'chat', '', '', '[]'::jsonb, 'active', 1,
           'policy', now() - interval '35 days', now() - interval '35 days'
    FROM reviews_entity e
    JOIN (VALUES ('user', 'name', 'Name', 'normal', 'identity'), ('user', 'location', 'City', 'personal', 'constraint'),
                 ('project', 'database', 'MySQL', 'normal', 'constraint')) AS f(entity_type, field, value, sensitivity, category)
      ON f.entity_type = e.entity_type
    WHERE e.tenant_id = %(tenant)s AND (e.entity_type = 'user' OR e.entity_id = 'p1')
    """,
    # The candidates: one INSERT ... SELECT over generate_series, created two seconds apart.
    # Row i belongs to subject i % 1000; j = i / 1000 numbers a subject's own rows, and every
    # other attribute mixes in j, so a subject's rows vary (field, status, thread, flags...).
    f"""
    WITH subjects AS (
        SELECT id, user_id, row_number() OVER (ORDER BY id) - 1 AS n FROM reviews_subject WHERE tenant_id = %(tenant)s
    ), series AS (
        SELECT i, i / %(subjects)s AS j, (i::bigint * 2654435761) %% 1009 AS roll FROM generate_series(1, %(candidates)s) i
    ), rows AS (
        SELECT series.*, (j * 7 + i) %% 10 AS k, s.id AS subject_id, s.user_id, f.entity_type, f.field,
               CASE WHEN roll < 505 THEN 'pending_review' WHEN roll < 606 THEN 'pending_user'
                    WHEN roll < 858 THEN 'approved' WHEN roll < 959 THEN 'rejected' ELSE 'auto_approved' END AS status
        FROM series
        JOIN subjects s ON s.n = series.i %% %(subjects)s
        JOIN {FIELDS_SQL} ON f.k = (series.j * 7 + series.i) %% 10
    )
    INSERT INTO reviews_candidate (tenant_id, subject_id, entity_id, entity_type, entity_ref_id, field, value,
                                   confidence, kind, scope, thread_id, supersedes, source, source_message_id, evidence,
                                   extractor, prompt_version, status, reason, note, flags, has_conflict, version,
                                   decided_by, decided_at, created_at, updated_at, claimed_by, flag_details)
    SELECT %(tenant)s, r.subject_id, e.id, r.entity_type, e.entity_id, r.field, 'value ' || r.i,
           0.5 + ((r.j * 13 + r.i * 7) %% 50) / 100.0, 'fact', 'long_term', '', false, 'chat',
           r.user_id || '-t' || (1 + r.j %% 20) || '-m' || (1 + (r.j * 3 + r.i) %% 10),
           'topic ' || ((1 + r.j %% 20) * 10 + 1 + (r.j * 3 + r.i) %% 10),
           CASE WHEN (r.j + r.i) %% 3 = 0 THEN 'llm' ELSE 'rules' END, 'v' || (1 + r.j %% 4),
           r.status,
           CASE r.status WHEN 'pending_review' THEN 'needs_review' WHEN 'pending_user' THEN 'needs_confirmation'
                         WHEN 'approved' THEN (CASE WHEN r.j %% 5 = 0 THEN 'reviewer_edited' ELSE 'reviewer_approved' END)
                         WHEN 'rejected' THEN 'reviewer_rejected' ELSE 'auto_approve' END,
           '', CASE WHEN (r.j * 17 + r.i) %% 100 < 5 THEN '["new_entity"]' ELSE '[]' END::jsonb,
           r.status = 'pending_review' AND r.k IN (0, 3, 7) AND (r.j * 13 + r.i) %% 100 < 15,
           CASE WHEN r.status LIKE 'pending%%' THEN 1 ELSE 2 END,
           CASE WHEN r.status LIKE 'pending%%' THEN '' WHEN r.status = 'auto_approved' THEN 'policy'
                ELSE 'reviewer:' || (1 + (r.j + r.i) %% 5) END,
           CASE WHEN r.status LIKE 'pending%%' THEN NULL
                ELSE now() - (%(candidates)s - r.i) * interval '2 seconds' + interval '1 hour' END,
           now() - (%(candidates)s - r.i) * interval '2 seconds',
           now() - (%(candidates)s - r.i) * interval '2 seconds', '', '{{}}'::jsonb
    FROM rows r
    JOIN reviews_entity e ON e.subject_id = r.subject_id AND e.entity_type = r.entity_type
     AND e.entity_id = CASE WHEN r.entity_type = 'user' THEN r.user_id ELSE 'p' || (1 + r.j %% 2) END
    """,
    """
    UPDATE reviews_candidate c SET conflict_fact_id = f.id
    FROM reviews_fact f
    WHERE c.tenant_id = %(tenant)s AND c.has_conflict AND f.entity_id = c.entity_id AND f.field = c.field
      AND f.status = 'active'
    """,
    "UPDATE reviews_candidate SET has_conflict = false WHERE tenant_id = %(tenant)s AND has_conflict AND conflict_fact_id IS NULL",
]


def seed(tenant, candidates: int) -> None:
    from django.db import connection, transaction

    params = {"tenant": tenant.pk, "subjects": SUBJECTS, "candidates": candidates}
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in SEED_SQL:
            cursor.execute(statement, params)
    with connection.cursor() as cursor:
        cursor.execute(CONTESTED_SQL, params)
        cursor.execute("VACUUM ANALYZE reviews_candidate")
        cursor.execute("ANALYZE reviews_message")
        cursor.execute("ANALYZE reviews_entity")
        cursor.execute("ANALYZE reviews_fact")
        cursor.execute("ANALYZE reviews_subject")
    print(f"seeded {candidates:,} candidates across {SUBJECTS:,} subjects in {time.perf_counter() - started:.1f} s")


def prepare(candidates: int):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from reviews.models import Candidate, Role, Tenant
    from reviews.services.tenants import staff_create, tenant_create

    call_command("migrate", verbosity=0)
    tenant = Tenant.objects.filter(slug=TENANT).first()
    if tenant is None:
        tenant = tenant_create(slug=TENANT, name="Queue benchmark")
    held = Candidate.objects.filter(tenant=tenant).count()
    if held not in (0, candidates):
        raise SystemExit(f"the benchmark database holds {held:,} candidates, not {candidates:,}: run with --reseed")
    if held == 0:
        seed(tenant, candidates)
    else:
        print(f"reusing the seeded database ({candidates:,} candidates)")
    for username in ("bench-reviewer", *[f"bench-colleague-{n}" for n in range(COLLEAGUES)]):
        if not get_user_model().objects.filter(username=username).exists():
            staff_create(tenant=tenant, username=username, role=Role.REVIEWER, password=None)
    return tenant


@dataclass
class Timing:
    median: float
    p99: float
    cpu_median: float

    def __str__(self) -> str:
        return f"{self.median:7.1f} {self.p99:7.1f} {self.cpu_median:6.1f}"


def timed(run, iterations: int) -> Timing:
    """Wall-clock median and p99 (ms), and the median CPU time of this process (ms): on a busy
    machine the wall clock includes waiting for a core, the CPU time does not."""
    run()  # warm the caches the way a running server has them
    wall, cpu = [], []
    for _ in range(iterations):
        started, started_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    wall.sort()
    return Timing(statistics.median(wall), wall[min(len(wall) - 1, int(len(wall) * 0.99))], statistics.median(cpu))


def cursor_of_page(tenant, filters, page_number, limit, viewer):
    """The cursor that opens page ``page_number`` (1-based), walked the way this reviewer pages."""
    from reviews.selectors.queue import review_queue_page

    cursor = None
    for _ in range(page_number - 1):
        page = review_queue_page(tenant=tenant, filters=filters, cursor=cursor, limit=limit, related=(), viewer=viewer)
        if page.next_cursor is None:
            raise SystemExit(f"fewer than {page_number} pages for {filters}")
        cursor = page.next_cursor
    return cursor


CASES = [
    # label, QueueFilters arguments, the same filters as query parameters
    ("no filter", {}, {}),
    ("field=location, confidence 0.6-0.9", {"field": "location", "min_confidence": 0.6, "max_confidence": 0.9},
     {"field": "location", "min_confidence": "0.6", "max_confidence": "0.9"}),
    ("sensitivity=personal", {"sensitivity": "personal"}, {"sensitivity": "personal"}),
    ("conflict", {"conflict": True}, {"conflict": "yes"}),
    ("new entity", {"new_entity": True}, {"new_entity": "yes"}),
    ("entity_type=project, older than 7 days", {"entity_type": "project", "age": "gt7d"},
     {"entity_type": "project", "age": "gt7d"}),
    ("status=open (review, then user)", {"status": "open"}, {"status": "open"}),
    ("user_id=user-42", {"user_id": "user-42"}, {"user_id": "user-42"}),
    # Issue 13: search, sorts and flags.
    ("q=value 77777 (search, few hits)", {"q": "value 77777"}, {"q": "value 77777"}),
    ("q=topic 15 (search, many hits)", {"q": "topic 15"}, {"q": "topic 15"}),
    ("q=user-42 (search by user)", {"q": "user-42"}, {"q": "user-42"}),
    ("q=topic 15, field=location", {"q": "topic 15", "field": "location"}, {"q": "topic 15", "field": "location"}),
    ("sort=newest", {"sort": "newest"}, {"sort": "newest"}),
    ("sort=confidence", {"sort": "confidence"}, {"sort": "confidence"}),
    ("sort=priority (contested, conflicts)", {"sort": "priority"}, {"sort": "priority"}),
    ("flag=contested", {"flag": "contested"}, {"flag": "contested"}),
    # Claims: every case above already leaves colleagues' live claims out (the pool view).
    ("claims=mine (own claims)", {"claims": "mine"}, {"claims": "mine"}),
    ("claims=all (colleagues' too)", {"claims": "all"}, {"claims": "all"}),
    ("claims=mine, q=topic 15", {"claims": "mine", "q": "topic 15"}, {"claims": "mine", "q": "topic 15"}),
]
# Rows the seed marks contested (1 in 2,000 waiting items).
CONTESTED_SQL = """
    UPDATE reviews_candidate SET flags = '["contested"]'::jsonb
    WHERE tenant_id = %(tenant)s AND status = 'pending_review' AND id %% 2000 = 0 AND flags = '[]'::jsonb
"""

# The claims a team leaves behind, set before every run (leases are relative to now).
COLLEAGUES = 8
# Each colleague claims the next 100 (the most one claim takes) of a filter of their own, so
# the live claims lie at the head of several orders, not only of the unfiltered queue.
COLLEAGUE_FILTERS = [
    {},
    {},
    {"field": "location"},
    {"entity_type": "project"},
    {"sensitivity": "personal"},
    {"sort": "confidence"},
    {"sort": "newest"},
    {"q": "topic 15"},
]
# The measured reviewer holds 40 items of their own, spread (a field and a search).
VIEWER_CLAIMS = [({"field": "role"}, 20), ({"q": "topic 12"}, 20)]
# Leases that lapsed earlier in the day: one waiting item in twenty still names a holder
# (nobody clears an expired claim: it is simply no claim), so "free" is not just NULL.
EXPIRED_CLAIMS_SQL = """
    UPDATE reviews_candidate SET claimed_by = 'reviewer:' || (1 + id %% 7),
                                 claim_expires_at = now() - (1 + id %% 600) * interval '1 minute'
    WHERE tenant_id = %(tenant)s AND status = 'pending_review' AND id %% 20 = 3
"""


def seed_claims(tenant, viewer, colleagues) -> int:
    """Clear every claim, then lay down the day's: expired leases, colleagues' and the viewer's
    live ones, all through the claim service except the expired ones. Returns the live count."""
    from django.db import connection

    from reviews.models import Candidate
    from reviews.selectors.queue import QueueFilters
    from reviews.services.claims import candidates_claim

    Candidate.objects.filter(tenant=tenant).exclude(claimed_by="").update(claimed_by="", claim_expires_at=None)
    with connection.cursor() as cursor:
        cursor.execute(EXPIRED_CLAIMS_SQL, {"tenant": tenant.pk})
    live = 0
    for colleague, filter_args in zip(colleagues, COLLEAGUE_FILTERS):
        live += len(candidates_claim(tenant=tenant, actor=colleague, count=100, filters=QueueFilters(**filter_args)))
    for filter_args, count in VIEWER_CLAIMS:
        live += len(candidates_claim(tenant=tenant, actor=viewer, count=count, filters=QueueFilters(**filter_args)))
    return live


def print_ratios(rows) -> None:
    """Every case's median and p99 as a multiple of the unfiltered first page's, column by
    column: on a shared machine the absolute figures move with the load, these much less."""
    _label, _page, baseline = rows[0]
    print("\nratios to 'no filter', page 1, of this run (median ×, p99 ×)")
    for label, page_number, timings in rows:
        cells = [f"{t.median / base.median:5.2f}× {t.p99 / base.p99:5.2f}×" for t, base in zip(timings, baseline)]
        print(f"{label:<40}{page_number!s:>5} | " + " | ".join(f"{cell:>22}" for cell in cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=CANDIDATES, help="how many candidates to seed (default 1,000,000)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_QUEUE_DATABASE_URL"),
        help=f"default {DEFAULT_SERVER}/{DEFAULT_NAME}, with _<candidates> appended for another size",
    )
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--cases", default="", help="run only the cases whose label contains this text (and the claim cases)")
    parser.add_argument("--reseed", action="store_true", help="drop the benchmark database and seed it again")
    parser.add_argument("--seed-only", action="store_true", help="seed (or check) the database and stop")
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="set the collector up after start-up as gunicorn does before forking (memory_portal/collector.py: "
        "freeze what is loaded, full collections rare): the p99 tail is mostly the cyclic collector",
    )
    args = parser.parse_args()
    if args.candidates < SUBJECTS:
        parser.error(f"--candidates must be at least {SUBJECTS} (one per subject)")
    url = args.database_url or f"{DEFAULT_SERVER}/{DEFAULT_NAME}" + (
        "" if args.candidates == CANDIDATES else f"_{args.candidates}"
    )
    ensure_database(url, reset=args.reseed)
    os.environ["DATABASE_URL"] = url
    # Measure what production runs: no debug cursor wrappers, cached templates.
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-queue-only")
    os.environ.setdefault("MEMORY_DIGEST_KEY", "bench-queue-only-digest")
    os.environ.setdefault("DJANGO_SECURE_COOKIES", "0")

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from reviews.actors import Actor
    from reviews.selectors.queue import QueueFilters, review_queue_items, review_queue_page
    from reviews.services.claims import candidates_claim, candidates_release
    from reviews.services.tenants import api_key_create
    from reviews.models import Scope
    from reviews.views.reviewer import QUEUE_PAGE_SIZE_HTML

    tenant = prepare(args.candidates)
    if args.seed_only:
        return
    reviewer = get_user_model().objects.get(username="bench-reviewer")
    browser = Client()
    browser.force_login(reviewer)
    _, raw_key = api_key_create(tenant=tenant, scopes=[Scope.REVIEW], name="bench")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    me = Actor.reviewer(reviewer)
    viewer = str(me)
    colleagues = [
        Actor.reviewer(user)
        for user in get_user_model().objects.filter(username__startswith="bench-colleague-").order_by("username")
    ]
    live = seed_claims(tenant, me, colleagues)
    print(f"live claims: {live:,} ({len(colleagues)} colleagues and the measured reviewer); one waiting item in 20 holds an expired lease")
    # Laying the claims down rewrites some 50,000 rows. A server's autovacuum cleans up after
    # such churn; where autovacuum is off (as on the development machine) every run left its
    # dead rows and its entries in the flags' GIN pending list behind, and the next run read
    # through them (the contested count: 1 ms after a vacuum, 20 ms and growing after a few
    # runs). Vacuuming here measures every run against the same, cleaned-up table.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE reviews_candidate")
    if args.gc_freeze:
        from memory_portal.collector import prepare_for_serving

        prepare_for_serving()

    print(f"\ntiming on {os.cpu_count()} cores")
    print(
        f"times in ms: wall median, wall p99, CPU median; {args.iterations} iterations each"
        f"{'; collector set up as for serving (frozen, young generation ' + str(gc.get_threshold()[0]) + ')' if args.gc_freeze else ''}\n"
    )
    print(f"{'case':<40}{'page':>5} | {'selector (50 items)':>22} | {'API (50 items)':>22} | {f'HTML page ({QUEUE_PAGE_SIZE_HTML} items)':>22}"
          f" | {'headline counts':>22}")
    worst: list[Timing] = []
    worst_counts: list[Timing] = []  # the deferred headline: its own request, after the page
    rows: list[tuple[str, object, list[Timing]]] = []
    for label, filter_args, params in CASES:
        if args.cases and args.cases not in label:
            continue
        filters = QueueFilters(**filter_args)
        for page_number in (1, DEEP_PAGE):
            try:
                api_cursor = cursor_of_page(tenant, filters, page_number, PAGE, viewer)
                html_cursor = cursor_of_page(tenant, filters, page_number, QUEUE_PAGE_SIZE_HTML, viewer)
            except SystemExit as short:
                print(f"{label:<40}{page_number:>5} | {short}")
                continue

            def select(filters=filters, cursor=api_cursor):
                page = review_queue_page(tenant=tenant, filters=filters, cursor=cursor, limit=PAGE, viewer=viewer)
                review_queue_items(tenant=tenant, candidates=page.candidates, viewer=viewer)

            def call_api(query=dict(params, limit=PAGE, **({"cursor": api_cursor.encode()} if api_cursor else {}))):
                query = {key: ("true" if value == "yes" else value) for key, value in query.items()}
                assert api.get("/api/v1/review/candidates", query).status_code == 200

            def view(query=dict(params, **({"cursor": html_cursor.encode()} if html_cursor else {}))):
                assert browser.get("/review/", query).status_code == 200

            def headline(query=params):
                assert browser.get("/review/counts", query, headers={"HX-Request": "true"}).status_code == 200

            timings = [timed(run, args.iterations) for run in (select, call_api, view)]
            worst.extend(timings)
            if page_number == 1:  # what the page asks for once shown: the same for every page
                timings.append(timed(headline, args.iterations))
                worst_counts.append(timings[-1])
            rows.append((label, page_number, timings))
            print(f"{label:<40}{page_number:>5} | " + " | ".join(f"{timing!s:>22}" for timing in timings))
    # Claiming: the reviewer takes the next 20 items past colleagues' claims, then gives them
    # back (so the pool is the same for every iteration); its own 40 are renewed each time.
    for label, filter_args in (("claim next 20, then release", {}), ("claim next 20 of field=location", {"field": "location"})):
        filters = QueueFilters(**filter_args)

        def claim_and_release(filters=filters):
            assert len(candidates_claim(tenant=tenant, actor=me, count=20, filters=filters)) == 20
            candidates_release(tenant=tenant, actor=me)

        claim = timed(claim_and_release, args.iterations)
        worst.append(claim)
        rows.append((label, "", [claim]))
        print(f"{label:<40}{'':>5} | {claim!s:>22} |")
    if rows and rows[0][0] == "no filter":
        print_ratios(rows)
    for actor in (me, *colleagues):
        candidates_release(tenant=tenant, actor=actor)
    print(
        f"\nworst median {max(t.median for t in worst):.1f} ms, worst p99 {max(t.p99 for t in worst):.1f} ms, "
        f"worst CPU median {max(t.cpu_median for t in worst):.1f} ms (target: median < 50 ms, p99 < 150 ms)"
    )
    if worst_counts:
        print(
            f"headline counts (asked for by the page once shown): worst median {max(t.median for t in worst_counts):.1f} ms, "
            f"worst p99 {max(t.p99 for t in worst_counts):.1f} ms"
        )


if __name__ == "__main__":
    main()
