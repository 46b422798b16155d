"""The service boundary (reviews/services/boundary.py): every write service screens its
text before its body runs, refuses malformed identifiers, and retries a lost deadlock."""
import importlib
import inspect
import logging
import pkgutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest
from django.db import connection, transaction
from django.db.utils import OperationalError

import reviews.services
from reviews import publication
from reviews.actors import SYSTEM, Actor
from reviews.errors import InvalidInput
from reviews.exports import ExportFilters
from reviews.models import AuditPayload, Candidate, Entity, EntityAlias, Fact, Message, RecallRecord, Subject, Tenant
from reviews.selectors.queue import QueueFilters
from reviews.recall.query import RecallQuery
from reviews.services import (
    audit_export,
    candidates,
    claims,
    erasure,
    facts,
    ingest,
    portal,
    tenants,
)
from reviews.recall import service as recall
from reviews.screening import Identifier, Text, Verbatim
from reviews.services import boundary
from reviews.services.boundary import ServiceDeclarationError, screen_arguments, screened, service
from reviews.domain import CandidateInput
from tests.conftest import candidate
from tests.dump import dump_all_tables
from tests.publication.conftest import store  # noqa: F401  (the projection's store, emptied around the test)

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
OPENAI_KEY = "sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn"
REVIEWER = Actor("reviewer", "7")
ALICE = Actor.subject("alice")


# --- Declaration: a text parameter cannot be forgotten -------------------------------------


def test_an_unclassified_text_parameter_fails_when_the_service_is_declared():
    def profile_update(*, tenant: Tenant, nickname: str, actor: Actor) -> None: ...

    with pytest.raises(ServiceDeclarationError, match="nickname"):
        service(profile_update)


@pytest.mark.parametrize("annotation", [str, str | None, list[str], dict, Annotated[str, "a note, not a screen"], None])
def test_anything_that_may_carry_text_needs_a_screen(annotation):
    def motto_set(*, motto): ...

    if annotation is not None:  # None: no annotation at all
        motto_set.__annotations__ = {"motto": annotation}
    with pytest.raises(ServiceDeclarationError, match="motto"):
        screened(motto_set)


def test_an_annotation_the_module_cannot_resolve_is_a_declaration_error_not_an_eval():
    def motto_set(*, motto: "Motto"): ...  # noqa: F821 - the name nobody defined is the point

    with pytest.raises(ServiceDeclarationError, match="Motto"):
        screened(motto_set)


def test_a_verbatim_screen_needs_its_reason():
    with pytest.raises(ValueError):
        Verbatim(" ")


# --- Renaming a parameter keeps its treatment: the marker decides, not the name --------------


def _profile_note(*, remark: Text = "", handle: Identifier = "") -> dict:
    return {"remark": remark, "handle": handle}


def _profile_note_renamed(*, handle: Text = "", remark: Identifier = "") -> dict:
    """The same two screens under each other's names (and names the old table knew:
    ``value`` was refused on a credential, ``password`` passed verbatim)."""
    return {"handle": handle, "remark": remark}


def _login_check(*, value: Annotated[str, Verbatim("a test: the marker, not the name")], password: Text) -> dict:
    return {"value": value, "password": password}


def test_the_screen_follows_the_marker_when_a_parameter_is_renamed():
    before, after = screened(_profile_note), screened(_profile_note_renamed)
    secret_text = f"my key {OPENAI_KEY}"

    assert before(remark=secret_text)["remark"] == "my key [redacted api_key]"
    assert after(handle=secret_text)["handle"] == "my key [redacted api_key]"
    with pytest.raises(InvalidInput) as refused:
        before(handle="bad id\x00")
    assert "handle" in refused.value.details
    with pytest.raises(InvalidInput) as refused:
        after(remark="bad id\x00")
    assert "remark" in refused.value.details

    login = screened(_login_check)
    assert login(value=secret_text, password=secret_text) == {
        "value": secret_text, "password": "my key [redacted api_key]"}


def test_a_dataclass_field_follows_its_marker_too():
    @dataclass
    class Card:
        title: Text
        owner: Identifier = ""

    def card_save(*, card: Card) -> Card:
        return card

    card_save = screened(card_save)
    assert card_save(card=Card(f"key {OPENAI_KEY}")).title == "key [redacted api_key]"
    with pytest.raises(InvalidInput) as refused:
        card_save(card=Card("a title", owner="bad\x00id"))
    assert "card.owner" in refused.value.details


def test_no_global_table_of_names_is_left():
    assert not hasattr(boundary, "RULES")
    source = Path(boundary.__file__).read_text()
    assert "eval(" not in source


def test_a_text_field_of_a_dataclass_input_needs_a_rule_too():
    @dataclass
    class Greeting:
        note: Text
        signature: str

    def greeting_send(*, greeting: Greeting, actor: Actor) -> None: ...

    with pytest.raises(ServiceDeclarationError, match="signature"):
        service(greeting_send)


def test_parameters_that_carry_no_text_need_none():
    def count_set(*, tenant: Tenant, count: int, ratio: float | None = None, actor: Actor) -> int:
        return count

    assert service(count_set).screens == ()


def _service_functions():
    for info in pkgutil.iter_modules(reviews.services.__path__):
        module = importlib.import_module(f"reviews.services.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__:
                yield f"{info.name}.{name}", function


def _noted_echo(*, user_id: Identifier, note: Text = "") -> dict:
    """A service in miniature: keyword-only, an identifier and a text."""
    return {"user_id": user_id, "note": note}


@pytest.mark.parametrize("call", [
    lambda echo: echo("alice", note="hi"),  # positional, for keyword-only parameters
    lambda echo: echo(note="hi"),  # a required one missing
    lambda echo: echo(user_id="alice", nickname="al"),  # one it does not take
])
def test_a_service_called_wrongly_gets_pythons_type_error(call):
    echo = screened(_noted_echo)
    with pytest.raises(TypeError):
        call(echo)


def test_a_keyword_call_is_screened_as_a_bound_one():
    echo = screened(_noted_echo)
    assert echo(user_id="alice", note=f"key {OPENAI_KEY}") == {"user_id": "alice", "note": "key [redacted api_key]"}
    assert echo(user_id="alice") == {"user_id": "alice", "note": ""}
    with pytest.raises(InvalidInput):
        echo(user_id="bad\x00id")

    def mixed(user_id: Identifier, *, note: Text = "") -> dict:  # not keyword-only: bound as before
        return {"user_id": user_id, "note": note}

    mixed = screened(mixed)
    assert mixed("alice", note=f"key {OPENAI_KEY}") == {"user_id": "alice", "note": "key [redacted api_key]"}


def test_every_transactional_service_goes_through_the_boundary():
    wrapped = {name for name, function in _service_functions() if hasattr(function, "__wrapped__")}
    bare = sorted(name for name, function in _service_functions()
                  if hasattr(function, "__wrapped__") and not hasattr(function, "screens"))
    assert "candidates.candidates_submit" in wrapped and bare == []
    sources = Path(reviews.services.__file__).parent.glob("*.py")
    assert [p.name for p in sources if p.name != "boundary.py" and "@transaction.atomic" in p.read_text()] == []


# --- Screening: credentials never reach a table ------------------------------------------


def _no_trace_of(*secrets):
    tables = dump_all_tables()
    for secret in secrets:
        assert secret not in tables


def test_a_key_as_entity_name_reaches_no_entity_alias_candidate_audit_or_store(tenant, submit, store):
    [result] = submit(tenant, "alice", candidate(entity_type="project", entity_id="", entity_name=AWS_KEY_ID,
                                                 field="database", value="MySQL", confidence=0.99))
    publication.project_subject(Subject.objects.get(user_id="alice").pk)

    stored = Candidate.objects.get(pk=result.candidate_id)
    assert "secret_masked" in stored.flags
    assert AWS_KEY_ID not in repr(list(Entity.objects.values())) + repr(list(EntityAlias.objects.values()))
    assert AWS_KEY_ID not in repr(list(AuditPayload.objects.values()))
    items = publication._search_all(store, ("tenants",))
    assert items and AWS_KEY_ID not in repr([(item.namespace, item.key, item.value) for item in items])
    _no_trace_of(AWS_KEY_ID)


def test_candidate_text_is_masked_and_a_secret_value_is_still_rejected_by_the_policy(tenant, submit):
    secret_value, masked_evidence = submit(
        tenant,
        "alice",
        candidate(field="location", value=f"key {OPENAI_KEY}", confidence=0.99),
        candidate(field="location", value="Berlin", confidence=0.6, evidence=f"Berlin, and my key is {OPENAI_KEY}"),
    )
    assert (secret_value.status, secret_value.reason) == ("rejected", "secret_detected")
    evidence = Candidate.objects.get(pk=masked_evidence.candidate_id)
    assert "secret_masked" in evidence.flags and "[redacted" in evidence.evidence
    _no_trace_of(OPENAI_KEY)


def test_a_field_named_password_is_masked_whatever_its_value(tenant, submit):
    [result] = submit(tenant, "alice", candidate(field="password", value="hunter2"))
    assert result.reason in ("field_not_allowed", "secret_detected")
    _no_trace_of("hunter2")


@pytest.fixture
def waiting(tenant, submit):
    """Four items waiting for a reviewer."""
    results = submit(tenant, "alice", *[candidate(field="preference", value=f"tea {n}", confidence=0.9) for n in range(4)])
    return [Candidate.objects.get(pk=r.candidate_id) for r in results]


def test_reviewer_notes_and_reasons_are_masked(tenant, waiting):
    first, second, third, fourth = waiting
    note = f"pasted {OPENAI_KEY} by mistake"
    candidates.candidate_reject(tenant=tenant, candidate_id=first.pk, version=first.version, note=note, actor=REVIEWER)
    candidates.candidate_defer(tenant=tenant, candidate_id=second.pk, version=second.version, note=note, actor=REVIEWER)
    outcome = candidates.candidates_bulk_decide(
        tenant=tenant, items=[(third.pk, third.version)], decision="reject", note=note, actor=REVIEWER
    )
    candidates.candidates_bulk_decide(
        tenant=tenant, items=[(fourth.pk, fourth.version)], decision="approve", note=note, actor=REVIEWER
    )
    assert outcome.decided == [third.pk]
    notes = set(Candidate.objects.filter(pk__in=[first.pk, second.pk, third.pk, fourth.pk]).values_list("note", flat=True))
    assert notes == {"pasted [redacted api_key] by mistake"}
    _no_trace_of(OPENAI_KEY)


def test_the_subjects_note_and_an_editors_reason_are_masked(tenant, publish):
    fact = publish(tenant, "alice", field="location", value="Berlin")
    Fact.objects.filter(pk=fact.pk).update(approved_by="reviewer:7")
    portal.fact_contest(tenant=tenant, user_id="alice", fact_id=fact.pk, note=f"no! {OPENAI_KEY}", actor=ALICE)
    other = publish(tenant, "alice", field="preference", value="green tea")
    facts.fact_edit(tenant=tenant, fact_id=other.pk, value="black tea", reason=f"as said: {OPENAI_KEY}", actor=REVIEWER)
    erasure.fact_erase(tenant=tenant, fact_id=other.pk, reason=f"gone {AWS_KEY_ID}", actor=REVIEWER)
    _no_trace_of(OPENAI_KEY, AWS_KEY_ID)


@pytest.mark.parametrize("value", [f"my key {OPENAI_KEY}", AWS_KEY_ID])
def test_a_correction_holding_a_credential_is_refused(tenant, publish, waiting, value):
    fact = publish(tenant, "alice", field="location", value="Berlin")
    item = waiting[0]
    with pytest.raises(InvalidInput) as refused:
        facts.fact_edit(tenant=tenant, fact_id=fact.pk, value=value, actor=REVIEWER)
    assert refused.value.details == {"value": "secret_detected"}
    with pytest.raises(InvalidInput):
        candidates.candidate_approve(tenant=tenant, candidate_id=item.pk, version=item.version, value=value, actor=REVIEWER)
    assert Fact.objects.get(pk=fact.pk).version == 1 and Candidate.objects.get(pk=item.pk).status == "pending_review"
    _no_trace_of(value)


def test_a_null_character_in_a_note_is_refused_not_a_500(tenant, waiting):
    item = waiting[0]
    with pytest.raises(InvalidInput) as refused:
        candidates.candidate_reject(tenant=tenant, candidate_id=item.pk, version=item.version, note="a\x00b", actor=REVIEWER)
    assert refused.value.details == {"note": "null_character"}
    assert Candidate.objects.get(pk=item.pk).status == "pending_review"


def test_the_recall_query_is_masked_in_the_recall_record(tenant, publish):
    publish(tenant, "alice", field="location", value="Berlin")
    query = RecallQuery(user_id="alice", q=f"where is {OPENAI_KEY}")
    record, _ = recall.recall_perform(tenant=tenant, query=query, actor=SYSTEM, may_see_sensitive=False)
    assert RecallRecord.objects.get(pk=record.pk).query["q"] == "where is [redacted api_key]"
    _no_trace_of(OPENAI_KEY)


def test_a_clean_dataclass_argument_is_passed_on_as_it_is_and_a_masked_one_rebuilt():
    clean = RecallQuery(user_id="alice", q="green tea", entities=(("project", "flask"),), fields=("stack",))
    masked = RecallQuery(user_id="alice", q="tea", entities=(("project", f"key {OPENAI_KEY}"),))

    assert recall.recall_perform.screens  # recall's query is screened field by field
    assert screen_arguments(recall.recall_perform.screens, {"query": clean})["query"] is clean
    rebuilt = screen_arguments(recall.recall_perform.screens, {"query": masked})["query"]
    assert rebuilt is not masked and rebuilt.entities == (("project", "key [redacted api_key]"),)
    assert rebuilt.q == "tea" and masked.entities[0][1].endswith(OPENAI_KEY)  # the caller's is left alone


def test_names_and_filters_staff_type_are_masked(tenant, waiting):
    tenants.tenant_create(slug="tenant-boundary", name=f"Acme {OPENAI_KEY}", actor=SYSTEM)
    tenants.api_key_create(tenant=tenant, scopes=["recall"], name=f"prod {OPENAI_KEY}", actor=SYSTEM)
    claims.candidates_claim(tenant=tenant, actor=REVIEWER, count=1, filters=QueueFilters(q=OPENAI_KEY))
    audit_export.audit_export_start(tenant=tenant, filters=ExportFilters(object=OPENAI_KEY), format="jsonl",
                                    actor=REVIEWER)
    _no_trace_of(OPENAI_KEY)


# --- Identifiers (SPEC §1) ---------------------------------------------------------------

BAD_IDENTIFIERS = {
    "null": ("a\x00b", "not_printable"),
    "escape": ("a\x1b[31mb", "not_printable"),
    "newline": ("a\nb", "not_printable"),
    "zero_width": ("a\u200bb", "not_printable"),
    "too_long": ("x" * 129, "too_long"),
    "blank": ("   ", "empty"),
    "aws_key_id": (AWS_KEY_ID, "secret_detected"),
}


def _message(**fields):
    return ingest.MessageInput(**({"id": "m-1", "thread_id": "t-1", "user_id": "alice", "role": "user",
                                   "content": "I like tea."} | fields))


@pytest.mark.parametrize("name", ["id", "thread_id", "user_id"])
@pytest.mark.parametrize("bad", sorted(BAD_IDENTIFIERS))
def test_ingest_refuses_a_bad_identifier_and_stores_nothing(tenant, name, bad):
    value, why = BAD_IDENTIFIERS[bad]
    with pytest.raises(InvalidInput) as refused:
        ingest.messages_ingest(tenant=tenant, messages=[_message(id="m-0"), _message(**{name: value})], actor=SYSTEM)
    assert refused.value.details == {f"messages.1.{name}": why}
    assert not Message.objects.exists() and not Subject.objects.exists()


@pytest.mark.parametrize("name", ["entity_id", "source_message_id", "thread_id"])
@pytest.mark.parametrize("bad", ["null", "escape", "too_long", "aws_key_id"])
def test_candidates_refuse_a_bad_identifier(tenant, submit, name, bad):
    value, why = BAD_IDENTIFIERS[bad]
    with pytest.raises(InvalidInput) as refused:
        submit(tenant, "alice", candidate(), candidate(**{name: value}))
    assert refused.value.details == {f"candidates.1.{name}": why}
    assert not Candidate.objects.exists()


@pytest.mark.parametrize("bad", sorted(BAD_IDENTIFIERS))
def test_a_bad_user_id_is_refused_by_every_service_that_names_one(tenant, submit, bad):
    value, why = BAD_IDENTIFIERS[bad]
    calls = [
        lambda: submit(tenant, value, candidate()),
        lambda: portal.portal_link_create(tenant=tenant, user_id=value, actor=SYSTEM),
        lambda: portal.subject_set_paused(tenant=tenant, user_id=value, paused=True, actor=SYSTEM),
        lambda: erasure.subject_erase(tenant=tenant, user_id=value, actor=SYSTEM),
        lambda: recall.recall_perform(tenant=tenant, query=RecallQuery(user_id=value), actor=SYSTEM,
                                      may_see_sensitive=False),
    ]
    for call in calls:
        with pytest.raises(InvalidInput) as refused:
            call()
        assert list(refused.value.details.values()) == [why]
    assert not Subject.objects.exists() and not RecallRecord.objects.exists()


@pytest.mark.parametrize("user_id", ["org/7", "a@b.com", "小李", "user 42", "4111111111111111"])
def test_ordinary_identifiers_are_accepted(tenant, user_id):
    ingest.messages_ingest(tenant=tenant, messages=[_message(user_id=user_id)], actor=SYSTEM)
    assert Subject.objects.get().user_id == user_id


def test_the_api_answers_400_in_the_error_shape(ingest_client, tenant):
    response = ingest_client.post_json("/api/v1/candidates", {
        "user_id": "alice", "candidates": [{**candidate(), "entity_id": AWS_KEY_ID}]})
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert "entity_id" in repr(response.json()["error"]["details"])  # refused by the edge or the boundary
    for user_id in ("a\x01b", AWS_KEY_ID, "x" * 129):
        response = ingest_client.post_json("/api/v1/messages", {"messages": [
            {"id": "m-1", "thread_id": "t-1", "user_id": user_id, "role": "user", "content": "hi"}]})
        assert response.status_code == 400, response.content
        assert set(response.json()["error"]) == {"code", "message", "details"}
    _no_trace_of(AWS_KEY_ID)
    assert not Message.objects.exists()


# --- Retry of a lost deadlock ---------------------------------------------------------------


def _crossing_services():
    """Two services locking the same two tenant rows in opposite orders: a deadlock on
    purpose (the product's own writers keep one order, which is what facts.lock_subject says)."""
    first_attempts = threading.Barrier(2)
    attempts = {"forward": 0, "backward": 0}

    @service
    def lock_both(*, first: int, second: int, name: Text) -> int:
        attempts[name] += 1
        Tenant.objects.select_for_update().get(pk=first)
        if attempts[name] == 1:
            first_attempts.wait(timeout=10)
        Tenant.objects.select_for_update().get(pk=second)
        return attempts[name]

    return lock_both, attempts


def _run_crossed(lock_both, tenant, other_tenant, *, outer: bool):
    outcomes = {}

    def run(direction, first, second):
        try:
            if outer:
                with transaction.atomic():
                    outcomes[direction] = lock_both(first=first, second=second, name=direction)
            else:
                outcomes[direction] = lock_both(first=first, second=second, name=direction)
        except OperationalError as error:
            outcomes[direction] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=("forward", tenant.pk, other_tenant.pk)),
               threading.Thread(target=run, args=("backward", other_tenant.pk, tenant.pk))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_a_service_that_lost_a_deadlock_runs_again(tenant, other_tenant, caplog):
    lock_both, attempts = _crossing_services()
    with caplog.at_level(logging.WARNING, logger="reviews.services.boundary"):
        outcomes = _run_crossed(lock_both, tenant, other_tenant, outer=False)
    assert sorted(outcomes.values()) == [1, 2], outcomes  # the victim succeeded on its second attempt
    assert sum(attempts.values()) == 3
    assert [r.getMessage() for r in caplog.records if "deadlock" in r.getMessage()][0].startswith("test_service_boundary.lock_both: deadlock, attempt 1 of")


@pytest.mark.django_db(transaction=True)
def test_inside_a_callers_transaction_the_deadlock_goes_to_the_caller(tenant, other_tenant):
    lock_both, attempts = _crossing_services()
    outcomes = _run_crossed(lock_both, tenant, other_tenant, outer=True)
    errors = [outcome for outcome in outcomes.values() if isinstance(outcome, OperationalError)]
    assert len(errors) == 1 and errors[0].__cause__.sqlstate == "40P01"
    assert attempts == {"forward": 1, "backward": 1}
