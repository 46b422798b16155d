"""The extraction dry run end to end on PostgreSQL (SPEC §4): messages ingested and decided
through the real pipeline with the rule extractor, then replayed through the LLM extractor
on the local OpenAI-compatible server. Nothing but the report (and its audit event) is
written."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.actors import Actor
from reviews.extraction import get_extractor_named
from reviews.models import (
    AuditEvent,
    Candidate,
    CandidateStatus,
    Entity,
    EntityAlias,
    ExtractionDryRun,
    Fact,
    FactVersion,
    Message,
    SuppressedValue,
)
from reviews.services.candidates import candidate_reject
from reviews.services.dry_run import extraction_dry_run
from tests.extraction.fake_openai import fact, facts
from tests.ingest.helpers import ingest, message

pytestmark = pytest.mark.django_db

MODELS = (Candidate, Fact, FactVersion, Message, Entity, EntityAlias, SuppressedValue)


def counts():
    return {model.__name__: model.objects.count() for model in MODELS}


@pytest.fixture
def history(tenant, reviewer, django_capture_on_commit_callbacks, settings):
    """What the rule extractor made of three messages, and what a reviewer decided."""
    settings.MEMORY_EXTRACTOR = "rules"
    ingest(tenant, message("m-1", "我叫 Alice。"), message("m-2", "我住在广州。"),
           message("m-3", "我负责 Flask 迁移项目，项目使用 MySQL。"), capture=django_capture_on_commit_callbacks)
    location = Candidate.objects.get(field="location")
    candidate_reject(tenant=tenant, candidate_id=location.pk, version=location.version,
                     actor=Actor.reviewer(reviewer), note="not where she lives")
    assert set(Candidate.objects.values_list("field", "value", "status")) == {
        ("name", "Alice", CandidateStatus.AUTO_APPROVED),
        ("location", "广州", CandidateStatus.REJECTED),
        ("relation:works_on", "project:flask-migration", CandidateStatus.PENDING_REVIEW),
        ("database", "MySQL", CandidateStatus.AUTO_APPROVED),
    }
    return tenant


@pytest.fixture
def second_extractor(llm_settings, fake_llm):
    answers = {
        "我叫 Alice。": facts(fact("name", "Alice", "我叫 Alice")),
        # The value the reviewer rejected: would come back.
        "我住在广州。": facts(fact("location", "广州", "我住在广州")),
        # Says nothing of the database: the approved MySQL would be missed.
        "我负责 Flask 迁移项目，项目使用 MySQL。": facts(
            fact("tech_stack", "Flask", "Flask 迁移项目", entity_type="project", entity_id="flask-migration")),
    }
    fake_llm.responder = lambda text: answers.get(text, facts())
    return get_extractor_named("llm", prompt_version="entity-facts-v2")


def test_a_second_extractor_is_compared_with_what_exists_and_nothing_is_written(history, second_extractor, fake_llm,
                                                                                  tenant_admin):
    before = counts()

    report = extraction_dry_run(tenant=history, extractor=second_extractor, actor=Actor.reviewer(tenant_admin))

    assert counts() == before
    assert len(fake_llm.requests) == 3
    assert (report.extractor, report.prompt_version) == ("llm:gpt-4.1-mini", "entity-facts-v2")
    assert {key: report.figures[key] for key in ("messages", "failures", "proposed", "approved_before")} == {
        "messages": 3, "failures": 0, "proposed": 3, "approved_before": 2}
    assert {group: report.figures[group] for group in ("re_proposed", "missed", "new", "refused")} == {
        "re_proposed": 1, "missed": 1, "new": 2, "refused": 1}
    assert [(e["field"], e["value"]) for e in report.examples["re_proposed"]] == [("name", "Alice")]
    assert [(e["field"], e["value"], e["message_id"]) for e in report.examples["missed"]] == [("database", "MySQL", "m-3")]
    assert [(e["field"], e["value"]) for e in report.examples["refused"]] == [("location", "广州")]
    event = AuditEvent.objects.get(tenant_id=history.pk, action="extraction.dry_run")
    assert (event.actor, event.payload.after["missed"], event.payload.after["refused"]) == (f"reviewer:{tenant_admin.pk}", 1, 1)
    assert "广州" not in str(event.payload.after)  # counts only in the trail


def test_the_command_prints_the_table_and_keeps_the_report(history, second_extractor, fake_llm):
    before = counts()
    out = StringIO()

    call_command("extraction_dry_run", "tenant-1", "--extractor", "llm", "--prompt-version", "entity-facts-v2",
                 "--days", "30", stdout=out)

    assert counts() == before
    text = out.getvalue()
    assert "would re-propose approved values" in text and "[missed] alice m-3: project:flask-migration database = MySQL" in text
    assert ExtractionDryRun.objects.get(tenant=history).figures["refused"] == 1


def test_old_messages_and_the_limit_are_left_out(history, second_extractor, fake_llm):
    from datetime import timedelta

    from django.utils import timezone

    Message.objects.filter(message_id="m-1").update(created_at=timezone.now() - timedelta(days=40))
    report = extraction_dry_run(tenant=history, extractor=second_extractor, actor=Actor("system"), days=30, limit=1)

    assert report.figures["messages"] == 1 and report.message_limit == 1
    assert len(fake_llm.requests) == 1 and "项目使用 MySQL" in fake_llm.requests[0].prompt


def test_another_tenants_messages_are_not_read(history, other_tenant, second_extractor, fake_llm):
    report = extraction_dry_run(tenant=other_tenant, extractor=second_extractor, actor=Actor("system"))

    assert report.figures["messages"] == 0 and fake_llm.requests == []


@pytest.mark.parametrize("args, problem", [
    (["nope"], "No tenant"),
    (["tenant-1", "--days", "0"], "days"),
    (["tenant-1", "--extractor", "rules", "--prompt-version", "entity-facts-v2"], "one version"),
])
def test_the_command_refuses_bad_arguments(tenant, args, problem):
    with pytest.raises(CommandError, match=problem):
        call_command("extraction_dry_run", *args, stdout=StringIO())
    assert not ExtractionDryRun.objects.exists()


def example_values(report):
    report.refresh_from_db()
    return sorted((group, e["user_id"], e["value"]) for group, items in report.examples.items() for e in items)


def test_forgetting_the_subject_drops_their_examples_from_kept_reports(history, second_extractor, fake_llm):
    from reviews.services.erasure import subject_erase

    report = extraction_dry_run(tenant=history, extractor=second_extractor, actor=Actor("system"))
    assert {user for _, user, _ in example_values(report)} == {"alice"}
    figures = dict(report.figures)

    receipt = subject_erase(tenant=history, user_id="alice", actor=Actor.subject("alice"))

    assert example_values(report) == []
    assert receipt.deleted["dry_run_examples"] == 5  # re-proposed 1, missed 1, new 2, refused 1
    assert report.figures == figures  # counts name nobody: they stay
    event = AuditEvent.objects.get(tenant_id=history.pk, action="subject.erased")
    assert event.payload.after["deleted"]["dry_run_examples"] == 5


def test_deleting_one_memory_drops_only_the_examples_quoting_its_value(history, second_extractor, fake_llm):
    from reviews.services.erasure import fact_erase

    report = extraction_dry_run(tenant=history, extractor=second_extractor, actor=Actor("system"))
    name = Fact.objects.get(subject__user_id="alice", field="name")

    receipt = fact_erase(tenant=history, fact_id=name.pk, actor=Actor.subject("alice"), user_id="alice")

    values = example_values(report)
    assert ("re_proposed", "alice", "Alice") not in values and ("new", "alice", "Alice") not in values
    assert ("missed", "alice", "MySQL") in values and ("refused", "alice", "广州") in values
    assert receipt.deleted["dry_run_examples"] >= 1


def test_digests_made_under_an_old_key_still_count(history, second_extractor, fake_llm, settings):
    """The refused value was suppressed under the key in force then; after a rotation that
    lists it as old, the dry run still finds it refused."""
    settings.MEMORY_DIGEST_OLD_KEYS = [settings.MEMORY_DIGEST_KEY]
    settings.MEMORY_DIGEST_KEY = "a-digest-key-after-rotation"

    report = extraction_dry_run(tenant=history, extractor=second_extractor, actor=Actor("system"))

    assert {group: report.figures[group] for group in ("re_proposed", "missed", "new", "refused")} == {
        "re_proposed": 1, "missed": 1, "new": 2, "refused": 1}
    assert [(e["field"], e["value"]) for e in report.examples["refused"]] == [("location", "广州")]
