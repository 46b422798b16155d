"""Statement patterns as data (reviews/extraction/patterns): each entry reads what it says,
and skip patterns keep other people's facts and hypotheticals out."""
import pytest

from reviews.extraction.evaluation import EvalItem, item_context
from reviews.extraction.rules import RuleExtractor


def read(*messages):
    context = item_context(EvalItem("x", tuple(("user", text) for text in messages), ()))
    return {(c.entity_type, c.field, c.value, c.kind) for c in RuleExtractor().extract(context).candidates}


@pytest.mark.parametrize("text, expected", [
    ("我每个月要还八千的房贷。", ("user", "finance", "房贷", "fact")),
    ("My salary is about 90k a year.", ("user", "finance", "salary", "fact")),
    ("我人在西安。", ("user", "location", "西安", "fact")),
    ("我打算明年搬到上海。", ("user", "location", "上海", "plan")),
    ("I'm planning to move to Amsterdam next year.", ("user", "location", "Amsterdam", "plan")),
    ("你可以叫我阿杰。", ("user", "name", "阿杰", "fact")),
    ("Call me Sam.", ("user", "name", "Sam", "fact")),
    ("我叫刘洋，在北京工作。", ("user", "location", "北京", "fact")),
    ("我在腾讯工作。", ("organization", "name", "腾讯", "fact")),
    ("I work at Umbrella, a biotech company.", ("organization", "industry", "biotech", "fact")),
])
def test_each_statement_reads_its_value(text, expected):
    assert expected in read(text)


@pytest.mark.parametrize("messages, expected", [
    (("我负责支付项目。", "支付项目已经上线了。"), ("project", "status", "已上线", "fact")),
    (("I lead the mobile app project.", "The mobile app project is on hold."), ("project", "status", "on hold", "fact")),
])
def test_project_statements_need_the_project_of_the_conversation(messages, expected):
    assert expected in read(*messages)
    assert not {item for item in read(messages[-1].replace("支付项目", "它").replace("The mobile app project", "It"))
                if item[1] == "status"}


@pytest.mark.parametrize("text", [
    "我朋友用 Java。", "我妈妈有高血压。", "他叫王强，住在上海。", "如果我搬到北京，房租大概多少？",
    "My brother has diabetes.", "My dad is a lawyer.", "Imagine I live in Oslo.", "If I were a manager, I'd hire more testers.",
    "我在一家银行做风控分析师。",
])
def test_nothing_about_the_user_is_read_from_others_or_hypotheticals(text):
    assert not {item for item in read(text) if item[0] == "organization" or item[1] in ("health", "role", "location",
                                                                                          "name", "tech_stack")
                and "分析师" not in item[2]}


def test_a_masked_credential_spoils_only_its_clause():
    assert read("我住在杭州，服务器密码是 Pa55w0rd-long-secret。") == {("user", "location", "杭州", "fact")}
    assert read("My name is Eve and my AWS key is AKIAIOSFODNN7EXAMPLE.") == {("user", "name", "Eve", "fact")}


@pytest.mark.parametrize("text, expected", [
    ("Actually, my name is Robert, not Bob.", ("name", "Robert")),
    ("更正一下，我叫张伟，不叫张维。", ("name", "张伟")),
    ("纠正一下，我不是产品经理，我是项目经理。", ("role", "项目经理")),
    ("Actually I'm a staff engineer now, not a senior engineer.", ("role", "staff engineer")),
])
def test_a_corrected_statement_replaces_the_old_value(text, expected):
    context = item_context(EvalItem("x", (("user", text),), ()))
    found = {(c.field, c.value): c.supersedes for c in RuleExtractor().extract(context).candidates}
    assert found[expected] is True


def test_alternative_phrasings_of_one_statement_yield_one_value():
    # The first location pattern that matches wins: the old city is not proposed too.
    assert {item for item in read("我之前在北京，现在在上海。") if item[1] == "location"} == {
        ("user", "location", "上海", "fact")
    }


@pytest.mark.parametrize("text, value, scope", [
    ("Keep this reply brief.", "Keep this reply brief", "thread"),
    ("For now, skip the tests.", "skip the tests", "thread"),
    ("以后写代码请加上类型注解。", "写代码请加上类型注解", "long_term"),
])
def test_requests_read_from_the_marker_words(text, value, scope):
    context = item_context(EvalItem("x", (("user", text),), ()))
    assert [(c.value, c.scope) for c in RuleExtractor().extract(context).candidates if c.field == "preference"] == [
        (value, scope)
    ]
