"""Every rule of SPEC §5's recall policy, through the recall service."""
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from reviews.actors import Actor
from reviews.errors import Forbidden
from reviews.models import Candidate, CandidateStatus, Fact, RecallRecord
from reviews.services.candidates import candidate_reject
from reviews.services.erasure import fact_delete
from reviews.services.facts import fact_edit
from tests.conftest import candidate

from .conftest import ids, reasons

pytestmark = pytest.mark.django_db
REVIEWER = Actor("reviewer", "r1")


def test_default_is_the_users_own_facts_and_preferences(recall, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice")
    likes_tea = publish(tenant, "u1", field="preference", value="likes green tea")
    style = publish(tenant, "u1", entity_type="preference", entity_id="answers", field="answer_style", value="short")
    project_db = publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="MySQL")

    _, result = recall("u1", explain=True)

    assert set(ids(result)) == {name.pk, likes_tea.pk, style.pk}
    assert reasons(result) == {project_db.pk: "not_requested"}
    assert result.facts[0]["id"] == name.pk  # the user entity first
    assert set(result.facts[0]) == {
        "id", "entity_type", "entity_id", "field", "value", "confidence", "category", "sensitivity",
        "scope", "source", "source_message_id", "version", "updated_at",
    }


def test_times_arrive_in_utc_to_the_microsecond(recall, publish, tenant):
    """Recall reads its rows with one written-out statement, not the ORM: the time must
    still be the stored instant, in UTC, written as the ORM would write it."""
    fact = publish(tenant, "u1", field="name", value="Alice")
    fact.refresh_from_db()

    _, result = recall("u1")

    assert result.facts[0]["updated_at"] == fact.updated_at.isoformat()
    assert result.facts[0]["updated_at"].endswith("+00:00")


def test_other_entities_come_when_named(recall, publish, tenant):
    project_db = publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="MySQL")
    other = publish(tenant, "u1", entity_type="project", entity_id="website", field="database", value="SQLite")

    _, result = recall("u1", entities=(("project", "flask-migration"),), explain=True)

    assert ids(result) == [project_db.pk]
    assert reasons(result) == {other.pk: "not_requested"}


def test_an_entity_can_be_named_by_an_alias(recall, publish, tenant):
    fact = publish(
        tenant, "u1", entity_type="project", entity_id="flask-migration", entity_name="Flask 迁移", field="status", value="in progress"
    )

    _, result = recall("u1", entities=(("project", "flask 迁移"),))

    assert ids(result) == [fact.pk]


def test_naming_needs_the_right_type(recall, publish, tenant):
    publish(tenant, "u1", entity_type="project", entity_id="acme", field="database", value="MySQL")

    _, result = recall("u1", entities=(("organization", "acme"),))

    assert ids(result) == []


def test_other_entities_come_when_q_matches_them(recall, publish, tenant):
    project_db = publish(tenant, "u1", entity_type="project", entity_id="flask-migration", field="database", value="PostgreSQL")
    unrelated = publish(tenant, "u1", entity_type="project", entity_id="website", field="status", value="paused")

    _, result = recall("u1", q="which database", explain=True)

    assert ids(result) == [project_db.pk]
    assert reasons(result) == {unrelated.pk: "not_requested"}


def test_q_matches_chinese_text(recall, publish, tenant):
    fact = publish(tenant, "u1", entity_type="project", entity_id="迁移项目", field="database", value="我们的数据库现在是 PostgreSQL")
    publish(tenant, "u1", entity_type="project", entity_id="网站", field="status", value="暂停了")

    _, result = recall("u1", q="项目用什么数据库")

    assert ids(result) == [fact.pk]


def test_q_ranks_the_best_match_first(recall, publish, tenant):
    tea = publish(tenant, "u1", field="preference", value="drinks green tea in the morning")
    publish(tenant, "u1", field="name", value="Alice")
    editor = publish(tenant, "u1", field="preference", value="uses vim as editor")

    _, result = recall("u1", q="vim editor")

    assert ids(result)[0] == editor.pk
    assert tea.pk in ids(result)  # q widens and ranks; the default facts stay


def test_field_restricts_the_result(recall, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice")
    role = publish(tenant, "u1", field="role", value="engineer")

    _, result = recall("u1", fields=("name",), explain=True)

    assert ids(result) == [name.pk]
    assert reasons(result) == {role.pk: "not_requested"}


def test_thread_facts_only_in_their_own_thread(recall, publish, tenant):
    here = publish(tenant, "u1", field="preference", value="answers in French", scope="thread", thread_id="t1")
    there = publish(tenant, "u1", field="preference", value="answers in German", scope="thread", thread_id="t2")
    always = publish(tenant, "u1", field="name", value="Alice")

    _, in_t1 = recall("u1", thread_id="t1", explain=True)
    _, no_thread = recall("u1", explain=True)

    assert set(ids(in_t1)) == {here.pk, always.pk}
    assert reasons(in_t1) == {there.pk: "other_thread"}
    assert ids(no_thread) == [always.pk]
    assert reasons(no_thread) == {here.pk: "other_thread", there.pk: "other_thread"}


def test_q_does_not_bring_another_threads_fact(recall, publish, tenant):
    there = publish(tenant, "u1", field="preference", value="answers in German", scope="thread", thread_id="t2")

    _, result = recall("u1", thread_id="t1", q="German", explain=True)

    assert ids(result) == []
    assert reasons(result) == {there.pk: "other_thread"}


@pytest.fixture
def health(publish, tenant):
    return publish(tenant, "u1", field="health", value="allergic to penicillin")


def test_sensitive_facts_need_the_scope_and_the_request(recall, health):
    _, neither = recall("u1", explain=True)
    _, scope_only = recall("u1", sensitive_scope=True, explain=True)
    _, both = recall("u1", sensitive_scope=True, include_sensitive=True)

    assert ids(neither) == [] and reasons(neither) == {health.pk: "sensitive"}
    assert ids(scope_only) == [] and reasons(scope_only) == {health.pk: "sensitive"}
    assert ids(both) == [health.pk]


def test_asking_for_sensitive_facts_without_the_scope_is_refused(recall, health):
    with pytest.raises(Forbidden):
        recall("u1", include_sensitive=True)
    assert not RecallRecord.objects.exists()


def test_q_does_not_bring_a_sensitive_fact(recall, health):
    _, result = recall("u1", q="penicillin allergic", explain=True)

    assert ids(result) == []
    assert reasons(result) == {health.pk: "sensitive"}


def test_an_expired_fact_is_never_returned(recall, publish, tenant):
    fact = publish(tenant, "u1", field="name", value="Alice")
    Fact.objects.filter(pk=fact.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    _, plain = recall("u1", explain=True)
    _, asked = recall("u1", q="Alice", fields=("name",), explain=True)

    assert ids(plain) == [] and ids(asked) == []
    assert reasons(plain) == {fact.pk: "expired"}


def test_a_swept_expired_fact_is_explained_too(recall, publish, tenant):
    fact = publish(tenant, "u1", field="name", value="Alice")
    Fact.objects.filter(pk=fact.pk).update(status="expired")

    _, result = recall("u1", explain=True)

    assert reasons(result) == {fact.pk: "expired"}


def test_a_fact_expiring_later_is_returned(recall, health):
    assert health.expires_at is not None  # sensitive: 90-day retention

    _, result = recall("u1", sensitive_scope=True, include_sensitive=True)

    assert ids(result) == [health.pk]


def test_a_one_field_returns_only_its_active_version(recall, publish, tenant):
    fact = publish(tenant, "u1", field="language", value="English")
    fact_edit(tenant=tenant, fact_id=fact.pk, value="Chinese", actor=REVIEWER)

    _, result = recall("u1", q="English")

    assert [(f["id"], f["value"], f["version"]) for f in result.facts] == [(fact.pk, "Chinese", 2)]


def test_a_deleted_fact_is_never_returned(recall, publish, tenant):
    fact = publish(tenant, "u1", field="name", value="Alice")
    fact_delete(tenant=tenant, fact_id=fact.pk, actor=REVIEWER)

    _, result = recall("u1", q="Alice", fields=("name",), explain=True)

    assert result.facts == []
    assert result.excluded == []  # deleted is gone, not "left out"


@pytest.mark.parametrize("outcome", ["pending_review", "pending_user", "rejected"])
def test_undecided_or_rejected_candidates_are_never_returned(recall, submit, tenant, outcome):
    confidence = {"pending_review": 0.85, "pending_user": 0.6, "rejected": 0.85}[outcome]
    result = submit(tenant, "u1", candidate(field="name", value="Mallory", confidence=confidence))[0]
    if outcome == "rejected":
        pending = Candidate.objects.get(pk=result.candidate_id)
        candidate_reject(tenant=tenant, candidate_id=pending.pk, version=pending.version, actor=REVIEWER, note="wrong")
    assert Candidate.objects.get(pk=result.candidate_id).status == outcome

    _, found = recall("u1", q="Mallory", fields=("name",), entities=(("user", "u1"),), explain=True)

    assert found.facts == [] and found.excluded == []


def test_a_low_confidence_rejected_candidate_is_never_returned(recall, submit, tenant):
    submit(tenant, "u1", candidate(field="name", value="Mallory", confidence=0.1))
    assert Candidate.objects.get().status == CandidateStatus.REJECTED

    _, found = recall("u1", q="Mallory")

    assert found.facts == []


def test_limit_cuts_and_explains(recall, publish, tenant):
    first = publish(tenant, "u1", field="name", value="Alice")
    second = publish(tenant, "u1", field="role", value="engineer")

    _, result = recall("u1", limit=1, explain=True)

    assert ids(result) == [first.pk]
    assert reasons(result) == {second.pk: "limit"}


def test_explain_never_carries_values(recall, publish, tenant):
    publish(tenant, "u1", field="preference", value="secret project codename", scope="thread", thread_id="t9")

    _, result = recall("u1", explain=True)

    assert result.excluded and all(set(item) == {"id", "reason"} for item in result.excluded)


def test_every_recall_is_recorded(recall, publish, tenant):
    name = publish(tenant, "u1", field="name", value="Alice")
    fact_edit(tenant=tenant, fact_id=name.pk, value="Alicia", actor=REVIEWER)

    record, result = recall("u1", q="who am I", thread_id="t1")

    record.refresh_from_db()
    assert record.tenant == tenant and record.user_id == "u1"
    assert record.caller == "api_key:agent"
    assert record.facts == [{"id": name.pk, "version": 2}]
    assert record.query["q"] == "who am I" and record.query["thread_id"] == "t1"


def test_a_recall_with_nothing_to_return_is_recorded_too(recall):
    record, result = recall("nobody")

    assert result.facts == []
    assert RecallRecord.objects.get(pk=record.pk).facts == []


def test_credentials_in_q_are_masked_in_the_record(recall):
    record, _ = recall("u1", q="my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")

    assert "abcdefghijklmnop" not in str(RecallRecord.objects.get(pk=record.pk).query)


def test_another_tenant_sees_nothing(recall, publish, tenant, other_tenant):
    publish(tenant, "u1", field="name", value="Alice")

    record, result = recall("u1", on=other_tenant, q="Alice", explain=True)

    assert result.facts == [] and result.excluded == []
    assert record.tenant == other_tenant


def _commit_mode():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('synchronous_commit')")
        return cursor.fetchone()[0]


ASYNC_INSERT = "set_config('synchronous_commit', 'off', true)"


@contextmanager
def statements():
    """The SQL text of every statement run (prepared ones included), as sent."""
    sent = []

    def record(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield sent


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit is PostgreSQL's")
class TestAsynchronousCommitOfRecallRecords:
    """MEMORY_RECALL_ASYNC_COMMIT: the record's own transaction skips the WAL flush wait."""

    @pytest.mark.django_db(transaction=True)
    def test_off_by_default_every_record_is_committed_durably(self, recall):
        with statements() as sent:
            recall("u1")

        assert not any(ASYNC_INSERT in sql for sql in sent)

    @pytest.mark.django_db(transaction=True)
    def test_on_only_the_records_own_transaction_skips_the_flush(self, recall, publish, tenant, settings):
        settings.MEMORY_RECALL_ASYNC_COMMIT = True
        name = publish(tenant, "u1", field="name", value="Alice")

        with statements() as sent:
            record, _ = recall("u1", q="Alice")

        [insert] = [sql for sql in sent if "INSERT INTO" in sql]
        assert ASYNC_INSERT in insert
        assert _commit_mode() == "on"  # local to the INSERT's transaction, now over
        stored = RecallRecord.objects.get(pk=record.pk)
        assert stored.facts == [{"id": name.pk, "version": 1}]
        assert stored.query["q"] == "Alice" and stored.created_at == record.created_at

    def test_on_inside_a_transaction_the_record_commits_with_it_durably(self, recall, tenant, settings):
        settings.MEMORY_RECALL_ASYNC_COMMIT = True

        with transaction.atomic():
            record, _ = recall("u1")
            assert _commit_mode() == "on"  # the enclosing transaction's other writes keep it

        assert RecallRecord.objects.filter(pk=record.pk).exists()
