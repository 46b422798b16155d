"""The rule extractor on single statements: what it proposes, and what it leaves alone."""
import pytest

from reviews.extraction.base import ExtractionContext, KnownEntity, PriorMessage
from reviews.extraction.rules import RuleExtractor
from reviews.secrets import mask_secrets


def extract(content, *, history=(), known=(), role="user"):
    context = ExtractionContext(
        user_id="u1",
        thread_id="t-1",
        message_id="m-1",
        role=role,
        content=mask_secrets(content).text,
        thread_history=tuple(PriorMessage(f"m-0{i}", "user", text) for i, text in enumerate(history)),
        known_entities=tuple(known),
    )
    return [
        (f"{c.entity_type}:{c.entity_id}", c.field, c.value, c.kind, c.scope, c.supersedes)
        for c in RuleExtractor().extract(context).candidates
    ]


U = "user:u1"


@pytest.mark.parametrize(
    "content,expected",
    [
        ("My name is Grace Hopper.", [(U, "name", "Grace Hopper", "fact", "long_term", False)]),
        ("我叫王小明，请多指教。", [(U, "name", "王小明", "fact", "long_term", False)]),
        ("I'm a senior site reliability engineer.", [(U, "role", "senior site reliability engineer", "fact", "long_term", False)]),
        ("我是一名后端工程师。", [(U, "role", "后端工程师", "fact", "long_term", False)]),
        ("I live in San Francisco.", [(U, "location", "San Francisco", "fact", "long_term", False)]),
        ("I moved to Lisbon last month.", [(U, "location", "Lisbon", "fact", "long_term", True)]),
        ("我搬到了成都。", [(U, "location", "成都", "fact", "long_term", True)]),
        ("我的母语是粤语。", [(U, "language", "粤语", "fact", "long_term", False)]),
        ("I speak German.", [(U, "language", "German", "fact", "long_term", False)]),
        ("My pen name is Ellis Bell.", [(U, "relation:pen_name", "Ellis Bell", "relation", "long_term", False)]),
        ("我的笔名是南山。", [(U, "relation:pen_name", "南山", "relation", "long_term", False)]),
        ("I work at Initech.", [
            ("organization:initech", "name", "Initech", "fact", "long_term", False),
            (U, "relation:works_at", "organization:initech", "relation", "long_term", False),
        ]),
        ("Please keep replies concise.", [(U, "preference", "keep replies concise", "fact", "long_term", False)]),
        ("This time, answer in Chinese.", [(U, "preference", "answer in Chinese", "fact", "thread", False)]),
        ("今天先用英文回答。", [(U, "preference", "先用英文回答", "fact", "thread", False)]),
        ("以后回答都附上测试。", [(U, "preference", "回答都附上测试", "fact", "long_term", False)]),
        ("I have type 2 diabetes.", [(U, "health", "have type 2 diabetes", "fact", "long_term", False)]),
        ("我对青霉素过敏。", [(U, "health", "对青霉素过敏", "fact", "long_term", False)]),
        ("我在跟前公司打劳动仲裁。", [(U, "legal_matter", "在跟前公司打劳动仲裁", "fact", "long_term", False)]),
    ],
)
def test_it_reads_common_statements(content, expected):
    assert extract(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "你好！",
        "Hi there, thanks a lot!",
        "Python 里怎么反转列表？",
        "What's the weather in Berlin?",
        "Can you keep it short?",  # a question, not a statement
        "帮我写一个排序函数。",  # a task, not a preference
        "帮我写测试。",
        "我正在学习 LangChain。",  # no project to attach the stack to, no field for it
        "My password is correct-horse-battery, remember it.",
        "我的密码是 abc123456。",
        "Here is my key: sk-proj-aaaaaaaaaaaaaaaaaaaaaaaa",
        "I'm going to lunch.",
        "我是新来的。",
    ],
)
def test_it_proposes_nothing_for_small_talk_questions_tasks_and_credentials(content):
    assert extract(content) == []


def test_it_never_reads_the_assistants_messages():
    assert extract("我叫 Alice。", role="assistant") == []


def test_a_project_database_and_its_correction():
    assert extract("我负责 Flask 迁移项目，项目使用 MySQL。") == [
        (U, "relation:works_on", "project:flask-migration", "relation", "long_term", False),
        ("project:flask-migration", "database", "MySQL", "fact", "long_term", False),
    ]
    assert extract("更新一下：Flask 迁移项目现在迁到 PostgreSQL 了。") == [
        ("project:flask-migration", "database", "PostgreSQL", "fact", "long_term", True),
    ]
    assert extract("Correction: we moved the Flask migration project to PostgreSQL.") == [
        ("project:flask-migration", "database", "PostgreSQL", "fact", "long_term", True),
    ]


def test_what_a_project_used_to_run_on_is_not_a_fact():
    assert extract("我们的检索项目原来用 Chroma，上周切到了 Milvus。") == [
        ("project:retrieval", "database", "Milvus", "fact", "long_term", True),
    ]
    assert extract("Our search service used to run on Solr.") == []


def test_a_plan_is_marked_plan_and_attaches_to_the_project_of_the_thread():
    history = ["更新一下：Flask 迁移项目现在迁到 PostgreSQL 了。", "今天帮我写得短一点。"]
    assert extract("我们可能要换 Redis 做缓存。", history=history) == [
        ("project:flask-migration", "tech_stack", "Redis", "plan", "long_term", False),
    ]
    assert extract("We might switch the billing service to MongoDB.") == [
        ("project:billing", "database", "MongoDB", "plan", "long_term", False),
    ]


def test_a_known_project_is_found_by_its_alias():
    known = [KnownEntity("project", "atlas", "Atlas", ("Atlas", "星图计划"))]
    assert extract("星图计划现在用 TiDB 了。", known=known) == [
        ("project:atlas", "database", "TiDB", "fact", "long_term", False),
    ]


def test_a_project_named_after_a_framework_does_not_make_it_its_stack():
    assert extract("The Flask migration project uses MySQL.") == [
        ("project:flask-migration", "database", "MySQL", "fact", "long_term", False),
    ]


def test_evidence_is_always_a_span_of_the_message():
    content = "你好，我叫 Alice。我负责 Flask 迁移项目，项目使用 MySQL。以后给我代码时尽量附上运行方式。"
    context = ExtractionContext(user_id="u1", thread_id="t", message_id="m", role="user", content=content)
    for item in RuleExtractor().extract(context).candidates:
        assert item.evidence and item.evidence in content
        assert item.source_message_id == "m"
