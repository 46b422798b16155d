"""Every writer at once on one subject, with real PostgreSQL connections (one per thread).

Ingests and candidate submissions through the API, approvals and rejections racing for
the same items, fact edits and an erasure, all released together. Before the lock order
of ``facts.lock_subject`` (ingest took the chain head first, the subject at commit) such a
mix answered HTTP 500 for about half the requests (deadlocks).
"""
import logging
import threading
from collections import Counter

import pytest
from django.db import connection

from reviews.actors import Actor
from reviews.audit import verify_tenant
from reviews.errors import NotFound, StaleVersion
from reviews.models import AuditAction, AuditEvent, Candidate, Fact, Message, Scope
from reviews.services.candidates import candidate_approve, candidate_reject
from reviews.services.erasure import subject_erase
from reviews.services.facts import fact_edit
from reviews.services.tenants import api_key_create
from tests.conftest import KeyClient, candidate

pytestmark = pytest.mark.django_db(transaction=True)

INGESTS = 24
SUBMISSIONS = 8
CONTESTED_ITEMS = 4  # each decided by two reviewers at once: one approves, one rejects
EDITS = 4
DECISIONS = (AuditAction.CANDIDATE_APPROVED, AuditAction.CANDIDATE_EDITED_APPROVED,
             AuditAction.CANDIDATE_REJECTED, AuditAction.CANDIDATE_DEFERRED)


def test_every_writer_at_once_on_one_subject(tenant, submit, publish, caplog):
    key, raw_key = api_key_create(tenant=tenant, scopes=[Scope.INGEST])
    publish(tenant, "alice", field="location", value="Berlin")
    edited = publish(tenant, "alice", field="preference", value="green tea")
    waiting = [
        Candidate.objects.get(pk=r.candidate_id)
        for r in submit(tenant, "alice", *[candidate(field="role", value=f"role {n}") for n in range(CONTESTED_ITEMS)])
    ]

    start = threading.Barrier(INGESTS + SUBMISSIONS + 2 * CONTESTED_ITEMS + EDITS + 1)
    statuses, accepted, unexpected, lock = [], Counter(), [], threading.Lock()

    def thread(work):
        def run():
            start.wait(timeout=30)
            try:
                work()
            except (StaleVersion, NotFound):
                pass  # someone decided first; the erasure took the item: both are answers, not failures
            except Exception as error:  # noqa: BLE001 - anything else is the test's failure
                with lock:
                    unexpected.append(repr(error))
            finally:
                connection.close()

        return threading.Thread(target=run)

    def api(path, body):
        def post():
            response = KeyClient(raw_key, key).post_json(path, body)
            with lock:
                statuses.append(response.status_code)
                if path.endswith("messages") and response.status_code == 202:
                    accepted[body["messages"][0]["id"]] += response.json()["accepted"]

        return post

    def message(n):
        return {"id": f"m-{n}", "thread_id": "t-1", "user_id": "alice", "role": "user",
                "content": f"我喜欢喝茶，第 {n} 次说。 I use Python {n}."}

    work = [api("/api/v1/messages", {"messages": [message(n)]}) for n in range(INGESTS)]
    work += [
        api("/api/v1/candidates", {"user_id": "alice", "candidates": [
            candidate(field="preference", value=f"snack {n}", confidence=0.99)]})
        for n in range(SUBMISSIONS)
    ]
    reviewer = Actor("reviewer", "1")
    for item in waiting:
        work.append(lambda item=item: candidate_approve(tenant=tenant, candidate_id=item.pk, version=item.version,
                                                        actor=reviewer))
        work.append(lambda item=item: candidate_reject(tenant=tenant, candidate_id=item.pk, version=item.version,
                                                       note="not their role", actor=reviewer))
    work += [lambda n=n: fact_edit(tenant=tenant, fact_id=edited.pk, value=f"tea {n}", actor=reviewer)
             for n in range(EDITS)]
    work.append(lambda: subject_erase(tenant=tenant, user_id="alice", actor=reviewer))

    threads = [thread(item) for item in work]
    with caplog.at_level(logging.WARNING, logger="reviews.services.boundary"):
        for each in threads:
            each.start()
        for each in threads:
            each.join(timeout=60)

    assert unexpected == []
    assert len(statuses) == INGESTS + SUBMISSIONS and max(statuses) < 500, Counter(statuses)
    # The lock order leaves nothing to retry: a deadlock here is a writer out of order.
    assert [r.getMessage() for r in caplog.records if "deadlock" in r.getMessage()] == []
    assert verify_tenant(tenant.pk).ok

    # Every message stored exactly once: each accepted once, in one event, and still there
    # unless the erasure came after it (erasure drops the readable payloads of the events
    # before it, so the ones after it say which messages must remain).
    assert accepted == Counter({f"m-{n}": 1 for n in range(INGESTS)})
    events = AuditEvent.objects.filter(tenant_id=tenant.pk)
    erased_at = events.get(action=AuditAction.SUBJECT_ERASED).seq
    ingest_events = events.filter(action=AuditAction.MESSAGES_INGESTED)
    assert ingest_events.count() == INGESTS
    after_erasure = {
        message_id
        for payload in ingest_events.filter(seq__gt=erased_at).values_list("payload__after", flat=True)
        for message_id in payload["messages"]
    }
    assert set(Message.objects.filter(tenant=tenant).values_list("message_id", flat=True)) == after_erasure

    decided = Counter(events.filter(action__in=DECISIONS, object_type="candidate").values_list("object_id", flat=True))
    assert max(decided.values(), default=1) == 1, decided
    assert Fact.objects.filter(tenant=tenant, status="active", field="location").count() <= 1
