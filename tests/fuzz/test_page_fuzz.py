"""Every page and every form, for every persona, with hostile values (issue 12).

The pages come from the URL resolver, not a hand list: a new page is fuzzed, or the test
that every named pattern is covered fails until it is listed in EXCLUDED with a reason.
Each persona (reviewer, auditor, tenant admin, the portal subject, a stranger) crawls from
every page; each GET is repeated with hostile values in every query parameter the page's
forms, links or view read and in its path's ids (another tenant's among them); each form
found (on a page, or in the answer to submitting another one) is posted with hostile values
in each field, then in all of them at once, then with another tenant's ids.

Asserted for every answer: no 5xx, no hostile markup printed unescaped; for a refused POST
(a 4xx, an error message, a form with errors) no table changed; for a POST carrying a
credential, the credential is in no table; for one carrying another tenant's ids, that
tenant's rows did not change. Every request runs in a savepoint rolled back afterwards, so
each starts from the same world and a successful POST cannot spoil the next.

Bounded: a few values per field (NUL, 100k characters and a huge number always, two more
chosen with SEED), every value once across all fields. Change SEED to try other ones.
"""
from __future__ import annotations

import copy
import inspect
import random
import re
import time
import traceback
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable
from urllib.parse import quote, urlsplit

import pytest
from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, Resolver404
from django.utils import timezone

from reviews.actors import SYSTEM, Actor
from reviews.api.errors import is_api_path
from reviews.exports import ExportFilters
from reviews.extraction import get_extractor_named
from reviews.models import AuditExport, Entity, ExportFormat, ExportStatus, Scope
from reviews.services.audit_export import audit_export_start
from reviews.services.candidates import candidate_approve, candidate_defer
from reviews.services.deletions import fact_deletion_schedule
from reviews.services.dry_run import extraction_dry_run
from reviews.services.portal import portal_link_create
from reviews.services.saved_views import saved_view_save
from reviews.models.webhooks import DeliveryStatus, WebhookDelivery, WebhookEvent
from reviews.webhooks.endpoints import webhook_create
from tests.conftest import candidate
from tests.dump import tables_holding
from tests.fuzz.pages import (
    ARRAY,
    CREDENTIAL_MARKS,
    HOSTILE,
    UNESCAPED_MARKS,
    Form,
    crawl,
    form_body,
    multipart_body,
    parse_page,
    query_pairs,
    refused,
    route_of,
    same_site_path,
    site_path,
    stored_state,
)
from tests.fuzz.test_verify_upload_fuzz import FILES
from tests.portal.conftest import enter, memory, say  # noqa: F401 (fixtures)
from tests.review.conftest import propose, review_queue  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SEED = 12
# Sent in every field: what most often broke a page (the database refusing a NUL, a value
# longer than its column, a number past 64 bits).
ALWAYS = ("nul", "100k characters", "huge number")
SAMPLED_PER_FIELD = 2
FOREIGN = "another tenant's id"

# Named non-API patterns the fuzz leaves alone, and why. The API (/api/, /compat/) has its
# own input tests (tests/api/test_input_limits.py, tests/services/test_service_boundary.py).
EXCLUDED = {
    "reviews:logout": "ends the session the fuzz runs in; reads nothing but the session",
    "reviews:portal_sign_out": "ends the subject's session; reads nothing but the session",
    "favicon": "a redirect to the static icon: reads no input (tests/core)",
    "healthz": "the load balancer's probe: reads no input (tests/core)",
    "readyz": "the load balancer's probe: reads no input, and answers 503 by design when the broker is down",
    "schema": "the OpenAPI document of the API",
    "api-docs": "the API's Swagger UI page: static, reads no input",
    "metrics": "the operators' Prometheus scrape: a bearer token, no input, no page to reach it from (tests/metrics)",
}
# Pages that write on a refusal, and why that is right.
WRITES_WHEN_REFUSED = {
    "reviews:bulk-decide": "a bulk decision records its summary event (what was asked, what failed) even when "
                           "every item was refused",
}
EXCLUDED_NAMESPACES = {"admin": "Django's admin: its own forms, reached only by superusers (no persona here)"}

# Which object of the world fills a pattern's path: one of ours, and another tenant's.
OBJECT_OF = {
    "reviews:candidate": "candidate",
    "reviews:candidate-body": "candidate",
    "reviews:candidate-comment": "candidate",
    "reviews:candidate-approve": "candidate",
    "reviews:candidate-reject": "candidate",
    "reviews:candidate-defer": "candidate",
    "reviews:candidate-settle": "conflict",
    "reviews:candidate-undo": "candidate",
    "reviews:dry-run": "dry_run",
    "reviews:entity": "entity",
    "reviews:entity-merge": "entity",
    "reviews:audit-export": "failed_export",  # its page offers "Run it again"
    "reviews:audit-export-file": "export",
    "reviews:audit-export-manifest": "export",
    "reviews:audit-export-again": "failed_export",
    "reviews:tenant-field-edit": "schema_field",
    "reviews:tenant-key-revoke": "key",
    "reviews:tenant-key-rotate": "key",
    "reviews:saved-view-delete": "saved_view",
    "reviews:tenant-webhook-delete": "webhook",
    "reviews:tenant-webhook-resend": "webhook_delivery",
    "reviews:tenant-staff-role": "staff",
    "reviews:tenant-staff-remove": "staff",
    "reviews:recall": "recall",
    "reviews:fact-recalls": "fact",
    "reviews:portal_enter": "link",
    "reviews:portal_fact": "portal_fact",
    "reviews:portal_fact_correct": "portal_fact",
    "reviews:portal_fact_add": "portal_fact",
    "reviews:portal_fact_delete": "portal_fact",
    "reviews:portal_fact_contest": "portal_fact",
    "reviews:portal_deletion_undo": "deletion",
    "reviews:portal_item_confirm": "portal_question",
    "reviews:portal_item_correct": "portal_question",
    "reviews:portal_item_reject": "portal_question",
    "reviews:portal_conflict_settle": "portal_conflict",
}
PERSONAS = ("reviewer", "auditor", "tenant_admin", "subject", "stranger")


# --- The URL patterns -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    name: str  # "reviews:candidate-approve"
    route: str  # "review/candidates/<int:pk>/approve"
    converters: tuple[tuple[str, str], ...]  # (kwarg, converter class name)
    callback: object

    def url(self, kwargs: dict) -> str:
        """The path with ``kwargs`` in place of its parameters (percent-encoded as bytes)."""
        def value(match):
            raw = kwargs[match[2]]
            raw = raw if isinstance(raw, bytes) else str(raw).encode("utf-8", "surrogatepass")
            return quote(raw, safe="")

        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, self.route)


def url_patterns() -> list[Pattern]:
    """Every named pattern of the site, with its full route and its namespace."""
    found = []

    def walk(entries, prefix, namespaces, converters):
        for entry in entries:
            route = prefix + str(entry.pattern)
            these = {**converters, **getattr(entry.pattern, "converters", {})}
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route, namespaces + [entry.namespace] if entry.namespace else namespaces, these)
            elif isinstance(entry, URLPattern) and entry.name:
                found.append(Pattern(":".join([*namespaces, entry.name]), route,
                                     tuple((k, type(c).__name__) for k, c in these.items()), entry.callback))

    walk(get_resolver().url_patterns, "", [], {})
    return found


def is_api(pattern: Pattern) -> bool:
    return is_api_path("/" + pattern.route)


def fuzzed_patterns() -> list[Pattern]:
    return [
        p for p in url_patterns()
        if not is_api(p) and p.name not in EXCLUDED and p.name.partition(":")[0] not in EXCLUDED_NAMESPACES
    ]


_GET_READ = re.compile(r"""request\.GET(?:\.get|\.getlist|\.pop)?\s*[(\[]\s*["'](\w+)["']""")


def params_read_by(callback) -> set[str]:
    """The query parameters a view's own code reads by name (what its forms read, the
    rendered forms tell)."""
    view = inspect.unwrap(callback)
    if hasattr(callback, "view_class"):
        return set()
    try:
        return set(_GET_READ.findall(inspect.getsource(view)))
    except (OSError, TypeError):
        return set()


def test_every_named_page_pattern_is_fuzzed_or_excluded_with_a_reason():
    patterns = url_patterns()
    names = {p.name for p in patterns}
    assert not set(EXCLUDED) - names, "EXCLUDED names a pattern that is gone"
    for pattern in fuzzed_patterns():
        if pattern.converters:
            assert pattern.name in OBJECT_OF, f"{pattern.name} ({pattern.route}): say in OBJECT_OF what fills its path"
    assert not set(OBJECT_OF) - {p.name for p in fuzzed_patterns()}, "OBJECT_OF names a pattern that is gone"
    # The API is left to its own tests by prefix, not by listing: nothing else may hide there.
    assert all(p.route.startswith(("api/", "compat/")) for p in patterns if is_api(p))


# --- The world ----------------------------------------------------------------------------------


@dataclass
class World:
    ours: dict[str, dict]  # object → path kwargs
    theirs: dict[str, dict]
    their_ids: dict[str, str]  # form field → another tenant's id for it
    their_tenant: object
    clients: dict[str, Client] = field(default_factory=dict)


def _objects(tenant, staff_member, memory_of, queue_items, *, auditor, admin, make_client, capture) -> dict:
    """One of each object a page path names, in ``tenant``."""
    deletion = fact_deletion_schedule(tenant=tenant, user_id=memory_of.user_id, fact_id=memory_of.database.pk,
                                      actor=Actor.subject(memory_of.user_id))
    deferred = candidate_defer(tenant=tenant, candidate_id=memory_of.conflict.pk, version=memory_of.conflict.version,
                               actor=Actor.reviewer(admin))
    with capture(execute=True):
        export = audit_export_start(tenant=tenant, filters=ExportFilters(), format=ExportFormat.JSONL,
                                    actor=Actor.reviewer(auditor))
    failed = AuditExport.objects.create(tenant=tenant, requested_by=str(Actor.reviewer(auditor)), format="csv",
                                        filters={}, status=ExportStatus.FAILED, error="OSError: disk full")
    report = extraction_dry_run(tenant=tenant, extractor=get_extractor_named("rules"), actor=Actor.reviewer(admin))
    recaller = make_client(tenant, [Scope.RECALL])
    recall = recaller.get("/api/v1/recall", {"user_id": memory_of.user_id, "q": "database"}).json()
    link, _ = portal_link_create(tenant=tenant, user_id=memory_of.user_id, actor=SYSTEM)
    first, conflict = queue_items
    view = saved_view_save(tenant=tenant, owner=admin, name="located", queue_query="field=location",
                           actor=Actor.reviewer(admin))
    endpoint, _ = webhook_create(tenant=tenant, url="http://127.0.0.1:9/hook", events=["fact.published"],
                                 actor=Actor.reviewer(admin))
    event = WebhookEvent.objects.create(tenant=tenant, webhook_id=f"msg_fuzz_{tenant.pk}", event_type="fact.published",
                                        user_id=memory_of.user_id, body={}, created_at=timezone.now())
    delivery = WebhookDelivery.objects.create(event=event, endpoint=endpoint, status=DeliveryStatus.FAILED, attempts=5)
    return {
        "candidate": {"pk": first.pk},
        "conflict": {"pk": conflict.pk},
        "dry_run": {"pk": report.pk},
        "entity": {"pk": memory_of.database.entity_id},
        "export": {"pk": export.pk},
        "failed_export": {"pk": failed.pk},
        "schema_field": {"entity_type": "user", "field_name": "name"},
        "key": {"prefix": recaller.key.prefix},
        "staff": {"user_id": staff_member.pk},
        "recall": {"pk": recall["recall_id"]},
        "fact": {"pk": memory_of.name.pk},
        "link": {"token": urlsplit(link).path.rstrip("/").rsplit("/", 1)[1]},
        "portal_fact": {"fact_id": memory_of.name.pk},
        "deletion": {"deletion_id": deletion.pk},
        "portal_question": {"candidate_id": memory_of.sensitive.pk},
        "portal_conflict": {"candidate_id": deferred.pk},
        "saved_view": {"pk": view.pk},
        "webhook": {"endpoint_id": endpoint.pk},
        "webhook_delivery": {"delivery_id": delivery.pk},
    }


@pytest.fixture
def world(tenant, other_tenant, reviewer, second_reviewer, auditor, tenant_admin, outsider, review_queue, memory,
          enter, make_client, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    settings.MEMORY_UNDO_SECONDS = 3600  # the scheduled deletion stays undoable for the whole run
    settings.MEMORY_WEBHOOK_ALLOW_PRIVATE = True  # the world's endpoints point at this machine (never sent to)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # A second project of alice's, so her entity page offers a merge.
    propose(tenant, "alice", candidate(entity_type="project", entity_id="website", field="database", value="SQLite",
                                       confidence=0.9))
    sam, their_sam = memory(tenant, "sam"), memory(other_tenant, "sam", prefix="t2sam")
    # A decision of the reviewer's a moment ago: the queue offers its undo.
    candidate_approve(tenant=tenant, candidate_id=review_queue.new_entity.pk, version=review_queue.new_entity.version,
                      actor=Actor.reviewer(reviewer))
    common = {"make_client": make_client, "capture": django_capture_on_commit_callbacks}
    ours = _objects(tenant, second_reviewer, sam, (review_queue.evidence, review_queue.conflict), auditor=auditor,
                    admin=tenant_admin, **common)
    ours["entity"] = {"pk": Entity.objects.get(tenant=tenant, subject__user_id="alice", entity_id="flask-migration").pk}
    theirs = _objects(other_tenant, outsider, their_sam, (their_sam.unsure, their_sam.plan), auditor=outsider,
                      admin=outsider, **common)
    theirs["schema_field"] = {"entity_type": "project", "field_name": "no-such-field"}
    # A link's token is its own authority (another tenant's valid link lets its subject in):
    # the foreign value is one whose signature does not hold.
    theirs["link"] = {"token": theirs["link"]["token"][:-4] + "AAAA"}
    their_candidate = theirs["candidate"]["pk"]
    their_ids = {"target": str(theirs["entity"]["pk"]), "ids": str(their_candidate),
                 "selected": f"{their_candidate}:1", "selected_all": f"{their_candidate}:1"}
    w = World(ours=ours, theirs=theirs, their_ids=their_ids, their_tenant=other_tenant)
    for persona, user in (("reviewer", reviewer), ("auditor", auditor), ("tenant_admin", tenant_admin)):
        w.clients[persona] = Client(enforce_csrf_checks=True)
        w.clients[persona].force_login(user)
    w.clients["subject"] = enter(tenant, "sam")
    w.clients["subject"].handler.enforce_csrf_checks = True
    w.clients["stranger"] = Client(enforce_csrf_checks=True)
    for client in w.clients.values():
        client.raise_request_exception = False
    return w


def tenant_rows(tenant) -> dict:
    """Every row of every model that belongs to ``tenant``."""
    rows = {}
    for model in apps.get_models():
        names = {f.attname for f in model._meta.concrete_fields}
        if "tenant_id" in names:
            rows[model._meta.label] = sorted(map(repr, model.objects.filter(tenant_id=tenant.pk).values_list()))
    return rows


# --- The fuzzer -------------------------------------------------------------------------------


def _where(exc_info) -> str:
    """The exception and the last frame of the project's code it went through."""
    if not exc_info:
        return "no exception"
    kind, error, tb = exc_info
    frames = [f for f in traceback.extract_tb(tb) if "/reviews/" in f.filename or "/memory_portal/" in f.filename]
    place = ""
    if frames:
        place = " at " + "/".join(frames[-1].filename.rsplit("/", 2)[-2:]) + f":{frames[-1].lineno}"
    first_line = str(error).splitlines()[0][:160] if str(error) else ""
    return f"{kind.__name__}: {first_line}{place}"


def _changed(before: dict, after: dict) -> str:
    return ", ".join(sorted(t for t in set(before) | set(after) if before.get(t) != after.get(t)))


@dataclass
class Sent:
    status: int
    html: str = ""
    # Parsed when asked for: the crawl and a form's next step read an answer's forms, the
    # hostile requests only check the answer.
    find_forms: Callable[[], list[Form]] = list

    @cached_property
    def forms(self) -> list[Form]:
        return self.find_forms()


@dataclass
class Fuzzer:
    """Sends requests and collects what went wrong (one example per page, check and error)."""

    world: World
    before: dict
    their_before: dict
    problems: dict = field(default_factory=dict)
    requests: int = 0
    reached: set = field(default_factory=set)  # routes that answered a GET with 200
    posted: set = field(default_factory=set)  # routes a form was posted to
    forms: int = 0

    def problem(self, persona, method, url, label, what):
        key = (method, route_of(urlsplit(url).path), re.sub(r"\d+", "N", what))
        self.problems.setdefault(key, f"{persona} {method} {url[:160]} [{label}]: {what}")

    def send(self, persona, method, url, *, body=b"", content_type="application/x-www-form-urlencoded", htmx=False,
             current="", label="", carries=()) -> Sent:
        """One request in a savepoint rolled back afterwards (and the client's cookies put
        back), with every check of its answer."""
        client = self.world.clients[persona]
        headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": f"http://testserver{current or url}"} if htmx else {}
        cookies = copy.deepcopy(client.cookies)
        try:
            with transaction.atomic():
                if method == "GET":
                    response = client.get(url, **headers)
                else:
                    response = client.generic("POST", url, body, content_type, **headers)
                sent = self._check(persona, method, url, label, carries, response)
                transaction.set_rollback(True)
        finally:
            # The CSRF cookie the first page set is kept: the forms' tokens are made from it.
            if settings.CSRF_COOKIE_NAME in client.cookies:
                cookies[settings.CSRF_COOKIE_NAME] = client.cookies[settings.CSRF_COOKIE_NAME].value
            client.cookies = cookies
        return sent

    def _check(self, persona, method, url, label, carries, response) -> Sent:
        self.requests += 1
        # Reading a streamed answer closes it; the test client closed any other already.
        content = b"".join(response.streaming_content) if response.streaming else response.content
        if response.status_code >= 500:
            self.problem(persona, method, url, label, f"{response.status_code} {_where(response.exc_info)}")
            return Sent(response.status_code)
        html = content.decode("utf-8", "replace") if "html" in response.get("Content-Type", "") else ""
        for mark in UNESCAPED_MARKS:
            if mark in html:
                self.problem(persona, method, url, label, f"printed unescaped: {mark}")

        def forms():
            found = parse_page(urlsplit(url).path, html)[0] if html else []
            for form in found:
                form.action, form.page = site_path(form.action) or urlsplit(url).path, url
            return found

        route = route_of(urlsplit(url).path)
        if method == "GET":
            location = response.get("Location", "")
            if response.status_code == 200 or 300 <= response.status_code < 400 and "/login/" not in location:
                self.reached.add(route)  # a page, or one that sends its visitor on (not to sign in)
            return Sent(response.status_code, html, forms)
        self.posted.add(route)
        was_refused = refused(response)
        try:
            pattern_name = resolve(urlsplit(url).path).view_name
        except Resolver404:
            pattern_name = ""
        if was_refused and pattern_name not in WRITES_WHEN_REFUSED and (after := stored_state()) != self.before:
            self.problem(persona, method, url, label,
                         f"refused ({response.status_code}) yet changed {_changed(self.before, after)}")
        if "credential" in carries:
            for mark in CREDENTIAL_MARKS:
                if holding := tables_holding(mark, skip=("django_session",)):
                    self.problem(persona, method, url, label, f"stored {mark!r} raw in {', '.join(holding)}")
        if "foreign" in carries and tenant_rows(self.world.their_tenant) != self.their_before:
            self.problem(persona, method, url, label, "changed another tenant's rows")
        target = same_site_path(response.get("Location", "")) if response.status_code in (301, 302, 303) else None
        if target and not was_refused:  # what the saved input looks like on the page it lands on
            followed = self._check(persona, "GET", target, f"{label}, followed", (), self.world.clients[persona].get(target))
            return Sent(response.status_code, followed.html, lambda: forms() + followed.forms)
        return Sent(response.status_code, html, forms)


TYPED = ("text", "textarea", "search", "password", "email", "url")


def hostile_values(rng: random.Random, kind: str, index: int) -> list[str]:
    """The hostile values one field gets: ALWAYS; then, in a field people type in, a
    credential and markup (alternating between fields); in any other, two of the rest."""
    chosen = list(ALWAYS)
    if kind in TYPED:
        return chosen + [("password", "aws key")[index % 2], ("script", "img onerror")[index % 2]]
    return chosen + rng.sample([key for key in (*HOSTILE, ARRAY) if key not in chosen], SAMPLED_PER_FIELD)


def carried(*keys) -> tuple:
    return tuple({"password": "credential", "aws key": "credential", FOREIGN: "foreign"}.get(k, "") for k in keys)


# A value written type:id (an entity, an item's id:version): the hostile part goes after
# the colon, so it passes the shape and reaches what reads the id.
SHAPED = re.compile(r"^[\w.-]+:(?=.)")


def _value(key: str, rendered: str = ""):
    prefix = match[0] if (match := SHAPED.match(rendered)) else ""
    if key == ARRAY:  # the field twice: what it rendered, then markup
        return [rendered, prefix + HOSTILE["script"]]
    value = HOSTILE[key]
    return prefix.encode() + value if isinstance(value, bytes) else prefix + value


def _query(pairs) -> str:
    return form_body(pairs).decode()


class Run:
    """One persona's crawl and fuzz. A form another persona fuzzed already is only posted
    as rendered and once with NUL everywhere (this persona's permission path)."""

    def __init__(self, fuzzer: Fuzzer, persona: str, patterns: list[Pattern], fuzzed_forms: set):
        self.fuzzer, self.persona, self.patterns, self.fuzzed_forms = fuzzer, persona, patterns, fuzzed_forms
        self.rng = random.Random(f"{SEED}:{persona}")
        self.statuses: dict[str, int] = {}

    def fetch(self, url):
        sent = self.fuzzer.send(self.persona, "GET", url, label="as linked")
        if sent.status == 302 and self.pattern_of(urlsplit(url).path):  # a page only htmx asks for (a panel it polls)
            sent = self.fuzzer.send(self.persona, "GET", url, htmx=True, label="as htmx polls it")
        self.statuses.setdefault(route_of(urlsplit(url).path), sent.status)
        return sent.status, sent.html

    def pattern_of(self, path: str) -> Pattern | None:
        route = route_of(path)
        return next((p for p in self.patterns if "/" + p.route == "/" + route or p.route == route), None)

    # GET: the query parameters and the path -----------------------------------------------------

    def fuzz_pages(self, pages: list[tuple[str, int]], forms: list[Form]):
        by_route = {}
        for url, status in pages:
            by_route.setdefault(route_of(urlsplit(url).path), []).append((url, status))
        for pattern in self.patterns:
            visits = by_route.get(pattern.route, [])
            if pattern.converters and all(status != 405 for _, status in visits):
                self.fuzz_path(pattern)
            url = next((u for u, status in visits if status == 200), None)
            if url is None:
                continue
            in_forms = {n for f in forms if f.method == "GET" and route_of(urlsplit(f.action).path) == pattern.route
                        for n in f.names()}  # fuzzed with their form
            linked = {name for u, _ in visits for name, _ in query_pairs(u)}
            params = sorted((params_read_by(pattern.callback) | linked) - in_forms)
            for index, name in enumerate(params):
                for n, key in enumerate(hostile_values(self.rng, "text", index)):
                    self.fuzzer.send(self.persona, "GET", f"{urlsplit(url).path}?{_query([(name, _value(key))])}",
                                     htmx=(index + n) % 2 == 0, label=f"{name}={key}", carries=carried(key))

    def path_values(self, pattern: Pattern, kwarg: str, converter: str) -> list[tuple[str, object]]:
        values = [(FOREIGN, self.fuzzer.world.theirs[OBJECT_OF[pattern.name]][kwarg])]
        if converter == "IntConverter":
            return values + [("zero", 0), ("huge number", HOSTILE["huge number"])]
        keys = ["nul", "lone surrogate", "invalid utf-8", "script", "sql", "right-to-left override", "chinese"]
        return values + [(key, HOSTILE[key]) for key in self.rng.sample(keys, 2)]

    def fuzz_path(self, pattern: Pattern):
        ours = self.fuzzer.world.ours[OBJECT_OF[pattern.name]]
        for kwarg, converter in pattern.converters:
            for key, value in self.path_values(pattern, kwarg, converter):
                self.fuzzer.send(self.persona, "GET", pattern.url({**ours, kwarg: value}), label=f"path {kwarg}={key}",
                                 carries=carried(key))

    # Forms --------------------------------------------------------------------------------------

    def fuzz_forms(self, forms: list[Form]):
        queue, seen = [variant for form in forms for variant in form.variants()], set()
        while queue:
            form = queue.pop(0)
            pattern = self.pattern_of(urlsplit(form.action).path)
            if form.method not in ("GET", "POST") or pattern is None:
                continue  # a dialog's close button; an excluded page (signing out)
            buttons = tuple(sorted((n, v) for n, v in form.fields if form.kinds.get(n) in ("submit", "button")))
            key = (form.method, pattern.name, tuple(sorted(set(form.names()))), buttons)
            if key in seen:
                continue
            seen.add(key)
            self.fuzzer.forms += 1
            # As rendered first: its answer may hold the next step's form (a confirmation,
            # an undo), fuzzed in turn.
            answer = self.submit(form, {}, "as rendered", htmx=form.htmx)
            queue.extend(variant for found in answer.forms for variant in found.variants())
            if key in self.fuzzed_forms:
                self.submit(form, dict.fromkeys(self.editable(form), HOSTILE["nul"]), "every field=nul")
                continue
            self.fuzzed_forms.add(key)
            self.fuzz_form(form, pattern)

    @staticmethod
    def editable(form: Form) -> list[str]:
        return [name for name in form.names() if name != "csrfmiddlewaretoken"]

    def fuzz_form(self, form: Form, pattern: Pattern):
        editable, rendered = self.editable(form), dict(form.fields)
        for index, name in enumerate(editable):
            for n, key in enumerate(hostile_values(self.rng, form.kinds.get(name, "text"), index)):
                self.submit(form, {name: _value(key, rendered.get(name, ""))}, f"{name}={key}",
                            htmx=form.htmx and (index + n) % 2 == 0, carries=carried(key))
        if editable:
            for n, key in enumerate(HOSTILE):
                self.submit(form, dict.fromkeys(editable, HOSTILE[key]), f"every field={key}",
                            htmx=form.htmx and n % 2 == 0, carries=carried(key))
        their_ids = self.fuzzer.world.their_ids
        if foreign := {name: their_ids[name] for name in editable if name in their_ids}:
            self.submit(form, foreign, "another tenant's ids", carries=carried(FOREIGN))
        if form.method == "POST":
            ours = self.fuzzer.world.ours[OBJECT_OF[pattern.name]] if pattern.converters else {}
            for kwarg, converter in pattern.converters:
                for key, value in self.path_values(pattern, kwarg, converter):
                    self.submit(form, {}, f"path {kwarg}={key}", action=pattern.url({**ours, kwarg: value}),
                                carries=carried(key))
        if form.method == "POST" and "csrfmiddlewaretoken" in form.names():
            sent = self.submit(form, {"csrfmiddlewaretoken": "x" * 64}, "a forged CSRF token")
            if sent.status != 403:
                self.fuzzer.problem(self.persona, "POST", form.action, "a forged CSRF token", f"answered {sent.status}")
        for name in form.files:
            for file_key in self.rng.sample(sorted(FILES), 3):
                self.submit(form, {}, f"{name}: {file_key}", files={name: FILES[file_key]})

    def submit(self, form: Form, values: dict, label: str, *, htmx=False, carries=(), action=None,
               files=None) -> Sent:
        """The form as rendered with ``values`` in place (a list: the field repeated)."""
        pairs, replaced = [], set()
        for name, rendered in form.fields:
            if name not in values:
                pairs.append((name, rendered))
            elif name not in replaced:
                replaced.add(name)
                value = values[name]
                pairs += [(name, v) for v in (value if isinstance(value, list) else [value])]
        path = urlsplit(action or form.action).path
        if form.method == "GET":
            return self.fuzzer.send(self.persona, "GET", f"{path}?{_query(pairs)}", htmx=htmx, label=label,
                                    carries=carries)
        if form.files:
            body, content_type = multipart_body(pairs, files or {})
        else:
            body, content_type = form_body(pairs), "application/x-www-form-urlencoded"
        return self.fuzzer.send(self.persona, "POST", path, body=body, content_type=content_type, htmx=htmx,
                                current=form.page, label=label, carries=carries)


def test_no_page_or_form_answers_5xx_prints_markup_or_keeps_a_refused_input(world):
    started = time.monotonic()
    assert not any(tables_holding(mark) for mark in CREDENTIAL_MARKS)
    fuzzer = Fuzzer(world, before=stored_state(), their_before=tenant_rows(world.their_tenant))
    patterns = fuzzed_patterns()
    start = [p.url(world.ours[OBJECT_OF[p.name]] if p.converters else {}) for p in patterns]
    fuzzed_forms: set = set()
    for persona in PERSONAS:
        run = Run(fuzzer, persona, patterns, fuzzed_forms)
        pages, forms = crawl(run.fetch, start, limit=200)
        run.fuzz_pages(pages, forms)
        run.fuzz_forms(forms)

    untouched = sorted(p.name for p in patterns if p.route not in fuzzer.reached | fuzzer.posted)
    figures = (f"{len(patterns)} page patterns, {fuzzer.forms} forms, {fuzzer.requests} requests "
               f"in {time.monotonic() - started:.0f} s")
    print(figures)
    assert not fuzzer.problems, f"{figures}; {len(fuzzer.problems)} problems:\n" + "\n".join(
        sorted(fuzzer.problems.values()))
    assert not untouched, f"no persona reached these pages nor found a form posting to them: {untouched}"
