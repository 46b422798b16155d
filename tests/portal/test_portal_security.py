"""A subject session reaches that subject's memory and nothing else (SPEC §1, §4).

Every portal URL is walked with another subject's ids (same tenant) and with the ids of a
namesake in another tenant: each answers 404 and changes nothing. Every POST needs the
CSRF token; everything a user wrote renders as text.
"""
import re
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import URLPattern

from reviews import portal_urls
from reviews.models import DeletionStatus, FactDeletion, AuditEvent, Candidate, Fact, Message, PortalLink, Subject
from reviews.actors import SYSTEM, Actor
from reviews.services.deletions import fact_deletion_schedule
from reviews.services.portal import portal_link_create
from tests.conftest import candidate
from tests.portal.conftest import link_path

# Enough of a form for every POST to reach the service (and not stop at form validation).
POST_DATA = {
    "version": "1",
    "value": "overwritten",
    "keep": "forever",
    "resolution": "take_new",
    "note": "mine now",
    "paused": "1",
    "confirm_text": "forget me",
}
# The door itself: a token, not an id; tested in test_portal_links.py.
DOOR = {"portal_enter"}


def patterns() -> list[URLPattern]:
    return [p for p in portal_urls.urlpatterns if p.name not in DOOR]


def url_for(pattern: URLPattern, **kwargs) -> str:
    route = str(pattern.pattern)
    for name, value in kwargs.items():
        route = re.sub(rf"<int:{name}>|<str:{name}>|<{name}>", str(value), route)
    assert "<" not in route, f"no ids given for {route}: add them to the walk"
    return "/me/" + route


def snapshot(subject_filter) -> dict:
    """Everything of a subject that an action could change."""
    return {
        "facts": sorted(Fact.objects.filter(**subject_filter).values_list("pk", "status", "value", "version")),
        "candidates": sorted(
            Candidate.objects.filter(**subject_filter).values_list("pk", "status", "value", "version")
        ),
        "messages": Message.objects.filter(**subject_filter).count(),
        "paused": list(Subject.objects.filter(**{k.replace("subject__", ""): v for k, v in subject_filter.items()})
                       .values_list("collection_paused", flat=True)),
    }


@pytest.fixture
def others(tenant, other_tenant, memory, submit):
    bob = memory(tenant, "bob")
    submit(tenant, "bob", candidate(entity_type="organization", entity_id="acme", field="industry",
                                    value="rockets", confidence=0.97))
    namesake = memory(other_tenant, "alice", prefix="t2alice")
    # Each has a deletion waiting for its undo window: alice must not undo it.
    for who, owner, victim in (("bob", tenant, bob), ("alice", other_tenant, namesake)):
        victim.deletion_ids = [
            fact_deletion_schedule(tenant=owner, user_id=who, fact_id=victim.name.pk, actor=Actor.subject(who)).pk
        ]
    return {"bob": bob, "namesake": namesake}


class TestEveryUrlWithSomeoneElsesIds:
    def test_the_walk_covers_every_route_with_an_id(self):
        with_ids = [p for p in patterns() if "<" in str(p.pattern)]
        assert {p.name for p in with_ids} >= {
            "portal_fact", "portal_fact_correct", "portal_fact_delete", "portal_fact_contest",
            "portal_item_confirm", "portal_item_correct", "portal_item_reject", "portal_conflict_settle",
        }
        for pattern in with_ids:
            assert set(pattern.pattern.converters) <= {"fact_id", "candidate_id", "deletion_id"}, pattern.name

    @pytest.mark.parametrize("whose", ["bob", "namesake"])
    def test_each_answers_404_and_changes_nothing(self, tenant, other_tenant, alice, alice_client, others, whose):
        victim = others[whose]
        victim_filter = (
            {"subject__tenant": tenant, "subject__user_id": "bob"}
            if whose == "bob"
            else {"subject__tenant": other_tenant, "subject__user_id": "alice"}
        )
        before, alice_before = snapshot(victim_filter), snapshot({"subject__tenant": tenant, "subject__user_id": "alice"})
        walked = 0
        for pattern in patterns():
            converters = set(pattern.pattern.converters)
            if not converters:
                continue
            if "deletion_id" in converters:
                ids = victim.deletion_ids
            else:
                ids = victim.fact_ids if "fact_id" in converters else victim.candidate_ids
            for some_id in ids:
                url = url_for(pattern, fact_id=some_id, candidate_id=some_id, deletion_id=some_id)
                for method in ("get", "post"):
                    response = getattr(alice_client, method)(url, POST_DATA)
                    if response.status_code == 405:
                        continue
                    walked += 1
                    assert response.status_code == 404, (method, url, response.status_code)
                    assert b"Not found" in response.content
        assert walked >= 30
        assert snapshot(victim_filter) == before
        assert FactDeletion.objects.get(pk=victim.deletion_ids[0]).status == DeletionStatus.SCHEDULED
        assert snapshot({"subject__tenant": tenant, "subject__user_id": "alice"}) == alice_before
        assert not AuditEvent.objects.filter(tenant_id=tenant.pk, actor="subject:alice").exclude(
            action="portal_link.redeemed"
        ).exists()

    @pytest.mark.parametrize(
        "scope",
        [
            {"thread_id": "bob-t1"},
            {"thread_id": "t2alice-t1"},
            {"entity": "organization:acme"},
            {"field": "industry"},
            {"thread_id": "alice-t1", "entity": "organization:acme"},
        ],
    )
    def test_deleting_someone_elses_conversation_topic_or_field_is_404(
        self, tenant, other_tenant, alice, alice_client, others, scope
    ):
        bob = {"subject__tenant": tenant, "subject__user_id": "bob"}
        namesake = {"subject__tenant": other_tenant, "subject__user_id": "alice"}
        before = snapshot(bob), snapshot(namesake)
        assert alice_client.get("/me/controls/delete/", scope).status_code == 404
        assert alice_client.post("/me/controls/delete/", scope).status_code == 404
        assert (snapshot(bob), snapshot(namesake)) == before

    def test_pages_without_ids_show_only_the_subjects_own_data(self, alice, alice_client, others):
        for pattern in patterns():
            if pattern.pattern.converters or pattern.name in ("portal_sign_out", "portal_receipt"):
                continue
            response = alice_client.get(url_for(pattern))
            if response.status_code == 405:
                continue
            body = response.content.decode()
            assert "bob-" not in body and "t2alice" not in body and "rockets" not in body, pattern.name

    def test_forget_me_erases_only_the_subject(self, tenant, other_tenant, alice, alice_client, others):
        bob = {"subject__tenant": tenant, "subject__user_id": "bob"}
        namesake = {"subject__tenant": other_tenant, "subject__user_id": "alice"}
        before = snapshot(bob), snapshot(namesake)
        alice_client.post("/me/controls/forget/", {"confirm_text": "forget me"})
        assert not Fact.objects.filter(subject__tenant=tenant, subject__user_id="alice").exists()
        assert (snapshot(bob), snapshot(namesake)) == before

    def test_pausing_pauses_only_the_subject(self, tenant, other_tenant, alice, alice_client, others):
        alice_client.post("/me/controls/pause/", {"paused": "1"})
        paused = dict(Subject.objects.filter(tenant=tenant).values_list("user_id", "collection_paused"))
        assert paused == {"alice": True, "bob": False}
        assert not Subject.objects.get(tenant=other_tenant, user_id="alice").collection_paused


class TestWithoutASession:
    def test_every_page_asks_for_a_link(self, alice):
        client = Client()
        for pattern in patterns():
            url = url_for(pattern, fact_id=alice.name.pk, candidate_id=alice.unsure.pk, deletion_id=1)
            for method in ("get", "post"):
                response = getattr(client, method)(url, POST_DATA)
                if response.status_code == 405:
                    continue
                if pattern.name == "portal_sign_out":
                    assert response.status_code == 200
                    continue
                assert response.status_code == 403, (method, url)
                assert b"Alice" not in response.content
        assert Fact.objects.get(pk=alice.name.pk).value == "Alice"
        assert Candidate.objects.get(pk=alice.unsure.pk).status == "pending_user"


class TestCsrf:
    @pytest.fixture
    def strict_client(self, tenant, alice, enter):
        """A browser that has opened its link, and whose POSTs are checked for the CSRF token."""
        relaxed = enter(tenant, "alice")
        strict = Client(enforce_csrf_checks=True)
        strict.cookies = relaxed.cookies
        return strict

    def test_every_post_needs_the_token(self, tenant, alice, strict_client):
        before = snapshot({"subject__tenant": tenant, "subject__user_id": "alice"})
        posted = 0
        for pattern in patterns():
            url = url_for(pattern, fact_id=alice.role.pk, candidate_id=alice.sensitive.pk, deletion_id=1)
            response = strict_client.post(url, POST_DATA)
            if response.status_code == 405:
                continue
            posted += 1
            assert response.status_code == 403, url
        assert posted >= 12
        assert snapshot({"subject__tenant": tenant, "subject__user_id": "alice"}) == before
        assert strict_client.get("/me/").status_code == 200  # still signed in: only the POSTs were refused

    def test_with_the_token_a_post_goes_through(self, alice, strict_client):
        page = strict_client.get("/me/controls/").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        response = strict_client.post("/me/controls/pause/", {"paused": "1", "csrfmiddlewaretoken": token})
        assert response.status_code == 302
        htmx = strict_client.post("/me/controls/pause/", {"paused": "0"}, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
        assert htmx.status_code == 200

    def test_spending_a_link_needs_the_token(self, tenant):
        url, _ = portal_link_create(tenant=tenant, user_id="alice", actor=SYSTEM)
        assert Client(enforce_csrf_checks=True).post(link_path(url)).status_code == 403
        assert PortalLink.objects.get().used_at is None


XSS = [
    "<img src=x onerror=alert(1)>",
    "{{ 7|add:42 }}{% now 'Y' %}",
    "</script><script>alert(1)</script>",
    "\"><svg onload=alert(1)>",
]


class TestUserWrittenValuesAreText:
    @pytest.fixture
    def hostile(self, tenant, submit, say, reviewer):
        from reviews.actors import Actor
        from reviews.services.candidates import candidate_approve

        for n, payload in enumerate(XSS):
            say(tenant, "alice", f"x-{n}", f"I said {payload}", thread_id=f"thread-{payload}")
            submit(tenant, "alice", candidate(field="preference", value=f"likes {payload}", confidence=0.97,
                                              source_message_id=f"x-{n}", evidence=payload))
            submit(tenant, "alice", candidate(entity_type="project", entity_id=f"p{n}", entity_name=payload,
                                              field="status", value=payload, confidence=0.6, evidence=payload))
        [role] = submit(tenant, "alice", candidate(field="role", value=XSS[0], confidence=0.9))
        candidate_approve(tenant=tenant, candidate_id=role.candidate_id, version=1, actor=Actor.reviewer(reviewer))
        return Fact.objects.get(pk=Candidate.objects.get(pk=role.candidate_id).fact_id)

    def test_every_page_escapes_them(self, tenant, hostile, alice_client_only):
        alice_client_only.post(f"/me/facts/{hostile.pk}/contest/", {"note": XSS[0]})
        preference = Fact.objects.filter(subject__user_id="alice", field="preference").first()
        pages = ["/me/", "/me/waiting/", "/me/controls/", f"/me/facts/{preference.pk}/"]
        pages += [f"/me/controls/delete/?{urlencode({'thread_id': f'thread-{payload}'})}" for payload in XSS]
        for path in pages:
            response = alice_client_only.get(path)
            assert response.status_code == 200, path
            body = response.content.decode()
            assert "<img src=x" not in body and "<svg onload" not in body, path
            assert "<script>alert(1)" not in body, path
        home = alice_client_only.get("/me/").content.decode()
        assert "&lt;img src=x onerror=alert(1)&gt;" in home
        assert "{{ 7|add:42 }}{% now &#x27;Y&#x27; %}" in home
        waiting = alice_client_only.get("/me/waiting/").content.decode()
        assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in waiting

    @pytest.fixture
    def alice_client_only(self, tenant, enter, db):
        return enter(tenant, "alice")
