"""ConversationEntityMemory on the governed adapter: summaries become candidates in the
queue; what reviewers approved comes back through get."""
import pytest
from langchain_classic.chains import ConversationChain
from langchain_classic.memory import ConversationEntityMemory
from langchain_classic.memory.prompt import ENTITY_MEMORY_CONVERSATION_TEMPLATE
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from reviews.actors import Actor
from reviews.legacy import GovernedEntityStore
from reviews.models import AuditEvent, Candidate, CandidateStatus, Cardinality, Category, Fact, FieldDefinition, Sensitivity
from reviews.services.candidates import candidate_approve

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
REVIEWER = Actor("reviewer", "r1")
SUMMARY = "The Flask migration moves the app from MySQL to PostgreSQL."


@pytest.fixture
def summary_field(tenant):
    """The tenant admin's one schema change for legacy chains: a reviewed summary field."""
    FieldDefinition.objects.create(
        tenant=tenant,
        entity_type="project",
        field="summary",
        cardinality=Cardinality.ONE,
        sensitivity=Sensitivity.NORMAL,
        category=Category.SCENARIO,
        auto_approve=False,
    )


def chain_with(store, responses):
    llm = FakeListChatModel(responses=responses)
    memory = ConversationEntityMemory(llm=llm, entity_store=store)
    return ConversationChain(llm=llm, memory=memory, prompt=ENTITY_MEMORY_CONVERSATION_TEMPLATE), memory


def test_what_the_chain_sets_waits_in_the_queue_and_approved_comes_back(tenant, summary_field, publish):
    publish(tenant, "u1", entity_type="project", entity_id="flask-migration", entity_name="Flask migration", field="database", value="PostgreSQL")
    store = GovernedEntityStore(tenant=tenant, user_id="u1")
    # extraction, the chain's answer, then the summary of each entity found
    chain, memory = chain_with(store, ["Flask migration", "Noted.", SUMMARY])

    reply = chain.invoke({"input": "We are moving the Flask app to PostgreSQL."})

    assert reply["response"] == "Noted."
    pending = Candidate.objects.get(field="summary")
    assert (pending.status, pending.entity_type, pending.entity_ref_id) == (
        CandidateStatus.PENDING_REVIEW, "project", "flask-migration"
    )
    assert pending.value == SUMMARY and pending.extractor == "legacy-entity-store"
    assert AuditEvent.objects.filter(
        action="candidate.submitted", object_id=str(pending.pk), actor="system:legacy-entity-store"
    ).exists()
    assert not Fact.objects.filter(field="summary").exists()  # never a fact directly
    assert store.get("Flask migration") == "database: PostgreSQL"  # only what was approved

    candidate_approve(tenant=tenant, candidate_id=pending.pk, version=pending.version, actor=REVIEWER)

    assert store.get("flask migration") == f"database: PostgreSQL; summary: {SUMMARY}"
    chain2, memory2 = chain_with(store, ["Flask migration", "It uses PostgreSQL.", SUMMARY])
    assert memory2.load_memory_variables({"input": "What database?"})["entities"] == {
        "Flask migration": f"database: PostgreSQL; summary: {SUMMARY}"
    }


def test_the_same_summary_is_queued_once(tenant, summary_field):
    store = GovernedEntityStore(tenant=tenant, user_id="u1")

    store.set("Flask migration", SUMMARY)
    store.set("Flask migration", SUMMARY)

    assert Candidate.objects.filter(field="summary").count() == 1


def test_get_hides_sensitive_thread_and_unknown(tenant, publish):
    publish(tenant, "u1", field="health", value="asthma")
    publish(tenant, "u1", field="name", value="Alice")
    publish(tenant, "u1", field="preference", value="French today", scope="thread", thread_id="t1")
    store = GovernedEntityStore(tenant=tenant, user_id="u1")

    assert store.get("me") == "name: Alice"
    assert store.get("Nobody", "") == ""
    assert not store.exists("Nobody")


def test_delete_and_clear_erase_nothing(tenant, publish):
    publish(tenant, "u1", field="name", value="Alice")
    store = GovernedEntityStore(tenant=tenant, user_id="u1")

    store.delete("me")
    store.clear()

    assert store.get("me") == "name: Alice"


def test_without_the_schema_field_the_policy_refuses_and_warns(tenant, caplog):
    store = GovernedEntityStore(tenant=tenant, user_id="u1")

    store.set("Flask migration", SUMMARY)

    assert Candidate.objects.get().reason == "field_not_allowed"
    assert "no field project.summary" in caplog.text


def test_another_tenants_adapter_sees_nothing(tenant, other_tenant, publish):
    publish(tenant, "u1", field="name", value="Alice")

    assert GovernedEntityStore(tenant=other_tenant, user_id="u1").get("me") is None
