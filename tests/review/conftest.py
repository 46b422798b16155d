"""Fixtures for the reviewer dashboard: a queue with context, and signed-in staff clients.

``review_queue`` builds, through the real pipeline, a subject (alice) with a thread of
messages, items waiting for review (one stating its evidence in a message, one in
conflict with a published fact, one on a new entity) and one waiting for the user.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest
from django.test import Client
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import Candidate, Fact
from reviews.domain import CandidateInput
from reviews.services.candidates import candidate_approve, candidates_submit
from tests.conftest import PASSWORD, candidate, sign_in, store_message

THREAD_START = datetime(2026, 11, 8, 9, 0, tzinfo=dt_timezone.utc)
XSS_VALUE = "<img src=x onerror=alert(1)>"
TEMPLATE_VALUE = "{{ request }} {% now 'Y' %} </script><script>alert(2)</script>"


def store_thread(tenant, user_id, thread_id, lines, *, start=THREAD_START):
    """Store chat messages [(message_id, role, content), ...] one minute apart."""
    return [
        store_message(
            tenant, user_id, message_id, content, thread_id=thread_id, role=role, created_at=start + timedelta(minutes=index)
        )
        for index, (message_id, role, content) in enumerate(lines)
    ]


def propose(tenant, user_id, *items, extractor="rules", prompt_version="v1", source="chat"):
    """Submit candidate dicts through the policy; returns the stored Candidates in order."""
    results = candidates_submit(
        tenant=tenant,
        user_id=user_id,
        candidates=[CandidateInput(**item) for item in items],
        source=source,
        actor=Actor("api_key", "test"),
        extractor=extractor,
        prompt_version=prompt_version,
    )
    return [Candidate.objects.get(pk=result.candidate_id) for result in results]


@dataclass
class ReviewQueue:
    evidence: Candidate  # pending_review, quoted from message m-3
    conflict: Candidate  # pending_review, conflicts with the published database fact
    new_entity: Candidate  # pending_review, on an entity extraction just created
    waiting_for_user: Candidate  # pending_user
    database_fact: Fact


@pytest.fixture
def review_queue(tenant) -> ReviewQueue:
    store_thread(
        tenant,
        "alice",
        "t-1",
        [
            ("m-1", "user", "Hi there."),
            ("m-2", "assistant", "Hello! How can I help?"),
            ("m-3", "user", "By the way, I live in Berlin these days."),
            ("m-4", "assistant", "Noted."),
            ("m-5", "user", "Our Flask migration project uses MySQL."),
            ("m-6", "user", "Something unrelated."),
        ],
    )
    [published] = propose(
        tenant,
        "alice",
        candidate(entity_type="project", entity_id="flask-migration", field="database", value="MySQL",
                  confidence=0.97, source_message_id="m-5", evidence="uses MySQL"),
    )
    evidence, conflict = propose(
        tenant,
        "alice",
        candidate(field="location", value="Berlin", source_message_id="m-3", evidence="I live in Berlin"),
        candidate(entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL",
                  confidence=0.9, source_message_id="m-6"),
        prompt_version="v2",
    )
    [new_entity] = propose(
        tenant, "alice", candidate(entity_type="organization", entity_id="acme", field="industry", value="Retail")
    )
    [waiting] = propose(tenant, "alice", candidate(field="role", value="engineer", confidence=0.7))
    assert (evidence.status, conflict.status, new_entity.status) == ("pending_review",) * 3
    assert conflict.has_conflict and waiting.status == "pending_user"
    return ReviewQueue(evidence, conflict, new_entity, waiting, Fact.objects.get(pk=published.fact_id))


def signed_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    assert sign_in(client, user.username)
    return client


# The queue page's headline placeholder: the address it asks for its counts once shown.
_COUNTS_ASKED = re.compile(r'<p class="counts" id="counts" data-counts data-counts-pending hx-get="([^"]+)" hx-trigger="load"')


def page_with_counts(client: Client, path: str, query: dict | None = None) -> str:
    """A queue page as the browser ends up showing it: the page, then its headline asked for
    as htmx asks for it (the placeholder's own address), put in the placeholder's place."""
    html = client.get(path, query or {}).content.decode()
    match = _COUNTS_ASKED.search(html)
    assert match, "the page has no deferred headline"
    answer = client.get(match.group(1).replace("&amp;", "&"), headers={"HX-Request": "true"})
    assert answer.status_code == 200, answer.status_code
    start = match.start()
    end = html.index("</p>", start) + len("</p>")
    return html[:start] + answer.content.decode() + html[end:]


@pytest.fixture
def reviewer_client(reviewer):
    return signed_in(reviewer)


@pytest.fixture
def second_reviewer_client(second_reviewer):
    return signed_in(second_reviewer)


@pytest.fixture
def auditor_client(auditor):
    return signed_in(auditor)


@pytest.fixture
def outsider_web_client(outsider):
    """A reviewer of tenant-2, signed in."""
    return signed_in(outsider)


BODY_URL = re.compile(r'hx-get="(/review/candidates/\d+/body\?version=\d+)"')


def item_body(client, pk_or_url, *, shown_on: str = "/review/") -> str:
    """An item's body as the queue fetches it when the item is opened (htmx, from ``shown_on``)."""
    url = pk_or_url if isinstance(pk_or_url, str) else reverse("reviews:candidate-body", args=[pk_or_url])
    response = client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=f"http://testserver{shown_on}")
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def with_bodies(client, html: str, *, shown_on: str = "/review/") -> str:
    """A queue page with every item's body (each fetched as opening it does) appended."""
    return html + "".join(item_body(client, url, shown_on=shown_on) for url in BODY_URL.findall(html))


def approve_as(user, item: Candidate, **kwargs) -> Candidate:
    return candidate_approve(
        tenant=item.tenant, candidate_id=item.pk, version=item.version, actor=Actor.reviewer(user), **kwargs
    )


@pytest.fixture(autouse=True)
def _fresh_stats_cache():
    """The stats page caches its figures per tenant for a minute; tests start without them."""
    from django.core.cache import cache

    cache.clear()
