"""Reads from a real streaming replica: recall's facts go there, writes and the pages that
must see their own writes stay on the primary; a replica that is down or behind is left out
and the primary serves (logged)."""
import logging

import pytest
from django.db import connections
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import Candidate, RecallRecord, Scope
from reviews.services.facts import fact_edit
from tests.conftest import candidate
from tests.portal.conftest import link_path
from tests.replicas.conftest import ALIAS, needs_replica
from tests.review.conftest import signed_in

pytestmark = [needs_replica, pytest.mark.django_db(transaction=True, databases=["default", ALIAS])]

URL = "/api/v1/recall"
EDITOR = Actor("reviewer", "test")


@pytest.fixture
def recall_client(tenant, make_client):
    return make_client(tenant, [Scope.RECALL])


@pytest.fixture
def tea(publish, tenant, replica):
    fact = publish(tenant, "u1", field="preference", value="green tea")
    replica.catch_up()
    return fact


def recalled_values(response):
    assert response.status_code == 200, response.content
    return [fact["value"] for fact in response.json()["facts"]]


def test_recall_reads_the_replica_and_records_on_the_primary(recall_client, tea, tenant, replica):
    replica.pause()
    fact_edit(tenant=tenant, fact_id=tea.pk, value="oolong", actor=EDITOR)
    replica.received_past_replay()

    response = recall_client.get(URL, {"user_id": "u1"})

    # Only the replica, its replay paused, still has the old value: the read went there.
    assert recalled_values(response) == ["green tea"]
    # The record was written on the primary (the replica is read-only, and paused).
    record = RecallRecord.objects.using("default").get(pk=response.json()["recall_id"])
    assert record.facts == [{"id": tea.pk, "version": 1}]
    assert not RecallRecord.objects.using(ALIAS).filter(pk=record.pk).exists()


def test_a_replica_too_far_behind_is_left_out_and_logged(recall_client, tea, tenant, replica, settings, caplog):
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 0.2
    replica.pause()
    fact_edit(tenant=tenant, fact_id=tea.pk, value="oolong", actor=EDITOR)
    replica.received_past_replay()
    replica.lagging(0.2)

    with caplog.at_level(logging.WARNING, logger="reviews.recall.replicas"):
        assert recalled_values(recall_client.get(URL, {"user_id": "u1"})) == ["oolong"]
    assert any("behind the primary" in message and ALIAS in message for message in caplog.messages)


def test_a_replica_that_drops_the_connection_falls_back_to_the_primary(recall_client, tea, replica, caplog):
    assert recalled_values(recall_client.get(URL, {"user_id": "u1"})) == ["green tea"]
    assert replica.terminate_app_sessions(connections[ALIAS].settings_dict["NAME"]) >= 1

    with caplog.at_level(logging.WARNING, logger="reviews.recall.replicas"):
        response = recall_client.get(URL, {"user_id": "u1"})

    assert recalled_values(response) == ["green tea"]
    assert any(f"replica {ALIAS} failed" in message for message in caplog.messages)
    # Left out for a while: the next recall goes straight to the primary, nothing logged.
    caplog.clear()
    assert recalled_values(recall_client.get(URL, {"user_id": "u1"})) == ["green tea"]
    assert not caplog.messages


def test_a_replica_that_is_down_falls_back_to_the_primary(recall_client, tea, replica, caplog):
    connections[ALIAS].close()
    connections[ALIAS].settings_dict["PORT"] = _closed_port()
    try:
        with caplog.at_level(logging.WARNING, logger="reviews.recall.replicas"):
            response = recall_client.get(URL, {"user_id": "u1"})
    finally:
        connections[ALIAS].settings_dict["PORT"] = replica.port

    assert recalled_values(response) == ["green tea"]
    assert any(f"replica {ALIAS} failed" in message for message in caplog.messages)
    assert RecallRecord.objects.filter(pk=response.json()["recall_id"]).exists()


def test_the_review_queue_after_a_decision_reads_the_primary(tenant, reviewer, submit, replica):
    [pending] = submit(tenant, "alice", candidate(field="location", value="Berlin"))
    item = Candidate.objects.get(pk=pending.candidate_id)
    assert item.status == "pending_review"
    client = signed_in(reviewer)
    replica.catch_up()
    replica.pause()

    client.post(reverse("reviews:candidate-approve", args=[item.pk]), {"version": item.version})
    replica.received_past_replay()
    page = client.get(reverse("reviews:queue"))

    assert page.status_code == 200
    assert f"/review/candidates/{item.pk}/" not in page.content.decode()
    # On the paused replica the candidate is still waiting: the queue did not read there.
    assert Candidate.objects.using(ALIAS).get(pk=item.pk).status == "pending_review"


def test_a_subjects_own_page_shows_their_correction_while_the_replica_lags(tea, tenant, replica):
    from django.test import Client

    from reviews.actors import SYSTEM
    from reviews.services.portal import portal_link_create

    url, _ = portal_link_create(tenant=tenant, user_id="u1", actor=SYSTEM)
    client = Client()
    assert client.post(link_path(url)).status_code == 302
    replica.catch_up()
    replica.pause()

    fact_edit(tenant=tenant, fact_id=tea.pk, value="jasmine tea", actor=Actor.subject("u1"), user_id="u1")
    replica.received_past_replay()
    page = client.get(reverse("reviews:portal_home")).content.decode()

    assert '"value">jasmine tea</span>' in page


def test_the_recall_record_a_recall_returned_is_found_while_the_replica_lags(
    recall_client, tea, auditor, replica
):
    replica.pause()
    recall_id = recall_client.get(URL, {"user_id": "u1"}).json()["recall_id"]
    replica.received_past_replay()

    detail = signed_in(auditor).get(reverse("reviews:recall", args=[recall_id]))

    assert detail.status_code == 200


def test_the_auditors_recall_list_is_served_by_the_replica(recall_client, tea, auditor, replica):
    replica.pause()
    recall_id = recall_client.get(URL, {"user_id": "u1"}).json()["recall_id"]
    replica.received_past_replay()
    auditor_client = signed_in(auditor)

    listed_while_paused = auditor_client.get(reverse("reviews:recalls")).content.decode()
    replica.resume()
    replica.catch_up()
    listed_after = auditor_client.get(reverse("reviews:recalls")).content.decode()

    link = reverse("reviews:recall", args=[recall_id])
    assert link not in listed_while_paused and link in listed_after


def test_an_instance_read_on_a_replica_is_saved_on_the_primary(tea, replica):
    from reviews.recall.replicas import read_on_replica
    from reviews.models import Fact

    fact = read_on_replica(lambda alias: Fact.objects.get(pk=tea.pk))
    assert fact._state.db == ALIAS
    fact.confidence = 0.5
    fact.save(update_fields=["confidence"])

    assert Fact.objects.using("default").get(pk=tea.pk).confidence == 0.5


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
