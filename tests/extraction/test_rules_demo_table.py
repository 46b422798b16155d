"""The rule extractor over the project's demo conversations, message by message.

For every message of ``reviews/fixtures/demo_conversations.jsonl`` the table lists the
candidates a careful reviewer would expect — entity, field, value, kind, scope — and the
outcome the policy gave each one when it was submitted (SPEC §3), in order. Messages
that state nothing (greetings, questions, the assistant, credentials) expect nothing.
The conversations are ingested through the real service, extraction running after each
commit as it does on the embedded default.
"""
import pytest

from reviews.extraction.rules import RULES_VERSION

from reviews.management.commands.demo import conversation_messages, load_conversations
from reviews.models import AuditEvent, Candidate, Message
from tests.dump import dump_all_tables
from tests.ingest.helpers import ingest

pytestmark = pytest.mark.django_db

A, PR, PU, SUP = "auto_approved", "pending_review", "pending_user", "superseded"
LT, TH = "long_term", "thread"
FACT, REL, PLAN = "fact", "relation", "plan"

# message id → [(entity, field, value, kind, scope, (status, reason))]
EXPECTED = {
    # Alice: names, a project and its database, the correction, one-off vs lasting, a plan, a key.
    "m-a1": [("user:alice", "name", "Alice", FACT, LT, (A, "auto_approve"))],
    "m-a2": [],  # the assistant: kept as context, never extracted
    "m-a3": [
        ("user:alice", "preference", "最喜欢的编程语言是 Python", FACT, LT, (PR, "needs_review")),
        ("user:alice", "location", "广州", FACT, LT, (PR, "needs_review")),  # personal: never automatic
    ],
    "m-a4": [
        ("user:alice", "relation:works_on", "project:flask-migration", REL, LT, (PR, "needs_review")),
        ("project:flask-migration", "database", "MySQL", FACT, LT, (A, "auto_approve")),
        ("user:alice", "preference", "回答尽量给生产实践", FACT, LT, (PR, "needs_review")),
    ],
    "m-a5": [("project:flask-migration", "database", "PostgreSQL", FACT, LT, (A, "correction"))],
    "m-a6": [("user:alice", "preference", "写得短一点", FACT, TH, (A, "auto_approve"))],
    "m-a7": [("user:alice", "preference", "给我代码时尽量附上运行方式", FACT, LT, (PR, "needs_review"))],
    "m-a8": [("project:flask-migration", "tech_stack", "Redis", PLAN, LT, (PU, "unconfirmed_kind"))],
    "m-a9": [],  # the OpenAI key: masked at ingest, nothing proposed
    # 小李: name, trade, a pen name (relation), a move (correction), a database switch.
    "m-l1": [
        ("user:xiaoli", "name", "小李", FACT, LT, (PR, "needs_review")),
        ("user:xiaoli", "role", "技术工作", FACT, LT, (PR, "needs_review")),
    ],
    "m-l2": [
        ("user:xiaoli", "relation:pen_name", "莫尔索", REL, LT, (PR, "needs_review")),
        ("user:xiaoli", "location", "深圳", FACT, LT, (PR, "needs_review")),
    ],
    "m-l3": [("project:retrieval", "database", "Milvus", FACT, LT, (A, "auto_approve"))],
    # Zhang: health and a legal matter are sensitive: the subject consents first.
    "m-z1": [
        ("user:zhang", "health", "有糖尿病史", FACT, LT, (PU, "sensitive_consent")),
        ("user:zhang", "health", "最近经常口渴和疲劳", FACT, LT, (PU, "sensitive_consent")),
    ],
    "m-z2": [
        ("user:zhang", "legal_matter", "去年的交通事故还在走流程，对方保险公司一直拖着误工费", FACT, LT,
         (PU, "sensitive_consent")),
    ],
    # Bob: English identity, a project, lasting preferences, a password, "we moved … to".
    "m-b1": [
        ("user:bob", "name", "Bob", FACT, LT, (PR, "needs_review")),
        ("user:bob", "role", "backend engineer", FACT, LT, (PR, "needs_review")),
        ("organization:acme", "name", "Acme", FACT, LT, (PR, "needs_review")),
        ("user:bob", "relation:works_at", "organization:acme", REL, LT, (PR, "needs_review")),
    ],
    "m-b2": [
        ("project:billing", "tech_stack", "Django", FACT, LT, (A, "auto_approve")),
        ("project:billing", "database", "PostgreSQL", FACT, LT, (A, "auto_approve")),
        ("user:bob", "preference", "keep answers short", FACT, LT, (PR, "needs_review")),
        ("user:bob", "preference", "always include tests", FACT, LT, (PR, "needs_review")),
    ],
    "m-b3": [("user:bob", "location", "Berlin", FACT, LT, (PR, "needs_review"))],  # the password: masked
    "m-b4": [("project:billing", "database", "CockroachDB", FACT, LT, (A, "correction"))],
    # 陈静: Chinese name and title, an organisation, a one-off and two lasting preferences, a plan.
    "m-c1": [
        ("user:chen", "name", "陈静", FACT, LT, (A, "auto_approve")),
        ("user:chen", "role", "产品经理", FACT, LT, (PR, "needs_review")),
    ],
    "m-c2": [
        ("organization:星云科技", "name", "星云科技", FACT, LT, (PR, "needs_review")),
        ("user:chen", "relation:works_at", "organization:星云科技", REL, LT, (PR, "needs_review")),
        ("user:chen", "relation:works_on", "project:recommendation", REL, LT, (PR, "needs_review")),
        ("project:recommendation", "database", "Elasticsearch", FACT, LT, (A, "auto_approve")),
        ("project:recommendation", "tech_stack", "Kafka", FACT, LT, (A, "auto_approve")),
    ],
    "m-c3": [("user:chen", "preference", "用英文回答我", FACT, TH, (A, "auto_approve"))],
    "m-c4": [
        ("user:chen", "preference", "都用中文回答", FACT, LT, (PR, "needs_review")),
        ("user:chen", "preference", "尽量给出示例代码", FACT, LT, (PR, "needs_review")),
    ],
    "m-c5": [("user:chen", "location", "杭州", PLAN, LT, (PU, "unconfirmed_kind"))],
    "m-c6": [],  # a database password: masked
    "m-c7": [],  # the assistant
    "m-c8": [],  # a passing question
    # Dana: English name/role/organisation, location and language, a pen name, a plan then a correction.
    "m-d1": [
        ("user:dana", "name", "Dana Whitfield", FACT, LT, (A, "auto_approve")),
        ("user:dana", "role", "data scientist", FACT, LT, (PR, "needs_review")),
        ("organization:globex", "name", "Globex", FACT, LT, (PR, "needs_review")),
        ("user:dana", "relation:works_at", "organization:globex", REL, LT, (PR, "needs_review")),
    ],
    "m-d2": [
        ("user:dana", "location", "Toronto", FACT, LT, (PR, "needs_review")),
        ("user:dana", "language", "French", FACT, LT, (PR, "needs_review")),
    ],
    "m-d3": [("user:dana", "relation:pen_name", "Iris Vale", REL, LT, (PR, "needs_review"))],
    "m-d4": [
        ("project:forecasting-pipeline", "tech_stack", "Airflow", FACT, LT, (A, "auto_approve")),
        ("project:forecasting-pipeline", "database", "Snowflake", FACT, LT, (A, "auto_approve")),
    ],
    "m-d5": [("project:forecasting-pipeline", "database", "BigQuery", PLAN, LT, (PU, "unconfirmed_kind"))],
    "m-d6": [("user:dana", "preference", "answer in bullet points", FACT, TH, (A, "auto_approve"))],
    "m-d7": [("user:dana", "preference", "always add type hints to code examples", FACT, LT, (PR, "needs_review"))],
    "m-d8": [("user:dana", "health", "was diagnosed with asthma last year", FACT, LT, (PU, "sensitive_consent"))],
    "m-d9": [
        ("user:dana", "legal_matter", "also in a lawsuit with my former landlord over the deposit", FACT, LT,
         (PU, "sensitive_consent")),
    ],
    "m-d10": [],  # an API key: masked
    "m-d11": [],  # a passing question
    "m-d12": [("project:forecasting-pipeline", "database", "BigQuery", FACT, LT, (A, "correction"))],
    "m-d13": [("user:dana", "location", "Montreal", FACT, LT, (PR, "needs_review"))],
    # Bob's "Flask migration project" is his own entity, not Alice's.
    "m-b5": [("project:flask-migration", "database", "MySQL", FACT, LT, (A, "auto_approve"))],
    "m-b6": [],
    "m-a10": [("project:flask-migration", "tech_stack", "Celery", FACT, LT, (A, "auto_approve"))],
}
CREDENTIALS = ["sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn", "hunter2", "Tr0ub4dor&3", "sk-live-9aB3xK7mQ2pL5vN8rT4w"]


@pytest.fixture
def demo(tenant, django_capture_on_commit_callbacks):
    for conversation in load_conversations():
        ingest(tenant, *conversation_messages(conversation), capture=django_capture_on_commit_callbacks)
    return tenant


def outcomes_by_candidate(tenant) -> dict[int, tuple[str, str]]:
    """The policy's outcome at submission, from the audit trail (later decisions aside)."""
    return {
        int(event.object_id): (event.action.removeprefix("policy."), event.reason_code)
        for event in AuditEvent.objects.filter(tenant_id=tenant.pk, action__startswith="policy.")
    }


def test_every_fixture_message_is_in_the_table():
    ids = [m.id for conversation in load_conversations() for m in conversation_messages(conversation)]
    assert sorted(ids) == sorted(EXPECTED)


def test_each_message_yields_what_a_careful_reviewer_expects(demo):
    outcomes = outcomes_by_candidate(demo)
    actual = {message_id: [] for message_id in EXPECTED}
    for c in Candidate.objects.filter(tenant=demo).select_related("subject").order_by("pk"):
        actual[c.source_message_id].append(
            (f"{c.entity_type}:{c.entity_ref_id}", c.field, c.value, c.kind, c.scope, outcomes[c.pk])
        )
    mismatches = {mid: {"expected": EXPECTED[mid], "actual": actual[mid]} for mid in EXPECTED if EXPECTED[mid] != actual[mid]}
    assert not mismatches


def test_every_candidate_records_its_extractor_evidence_and_thread(demo):
    for c in Candidate.objects.filter(tenant=demo):
        message = Message.objects.get(tenant=demo, message_id=c.source_message_id)
        assert (c.extractor, c.prompt_version, c.source) == ("rules", RULES_VERSION, "chat")
        assert c.evidence and c.evidence in message.content
        assert c.thread_id == (message.thread_id if c.scope == "thread" else "")


def test_assistant_messages_are_skipped_and_the_rest_extracted(demo):
    statuses = dict(Message.objects.filter(tenant=demo).values_list("message_id", "extraction_status"))
    assert {mid for mid, status in statuses.items() if status == "skipped"} == {"m-a2", "m-c7"}
    assert {status for mid, status in statuses.items() if mid not in ("m-a2", "m-c7")} == {"done"}


def test_a_correction_keeps_the_old_value_as_a_prior_version(demo):
    from reviews.models import Fact

    fact = Fact.objects.get(tenant=demo, subject__user_id="alice", entity__entity_id="flask-migration", field="database")
    assert fact.value == "PostgreSQL" and fact.version == 2
    assert list(fact.versions.values_list("value", flat=True)) == ["MySQL", "PostgreSQL"]


def test_credentials_are_masked_and_appear_in_no_table(demo):
    contents = dict(Message.objects.filter(tenant=demo).values_list("message_id", "content"))
    assert contents["m-a9"] == "顺便记一下我的 OpenAI key：[redacted api_key]"
    assert "[redacted password]" in contents["m-b3"] and "[redacted password]" in contents["m-c6"]
    assert "[redacted api_key]" in contents["m-d10"]
    tables = dump_all_tables()
    for secret in CREDENTIALS:
        assert secret not in tables
    ingested = AuditEvent.objects.filter(tenant_id=demo.pk, action="messages.ingested", subject_user_id="alice")
    masked = {mid: kinds for e in ingested for mid, kinds in e.payload.after["masked_credentials"].items()}
    assert masked == {"m-a9": ["api_key"]}
