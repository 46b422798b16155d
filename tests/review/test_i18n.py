"""English and Simplified Chinese: the browser's language by default, a switcher, a complete
catalog whose committed .mo matches the .po (CI needs no gettext)."""
import gettext
import re
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import translation

from reviews.errors import InvalidInput
from reviews.policy.identifiers import validate_identifier
from reviews.models import Scope

from tests.review.conftest import approve_as

CATALOG = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"


def po_entries() -> dict[str, tuple[str, str | None]]:
    """msgid -> (msgstr, msgid_plural): the first form stands for a plural entry. An entry
    with a context (pgettext) is keyed "context\x04msgid", as gettext stores it."""
    text = (CATALOG / "django.po").read_text(encoding="utf-8")
    entries = {}
    for block in text.split("\n\n"):
        if block.lstrip().startswith("#~"):
            continue
        context = re.search(r'^msgctxt "(.*)"$', block, re.M)
        msgid = re.search(r'^msgid "(.*)"$', block, re.M)
        plural = re.search(r'^msgid_plural "(.*)"$', block, re.M)
        msgstr = re.search(r'^msgstr(?:\[0\])? "(.*)"$', block, re.M)
        if msgid and msgid.group(1):
            key = (f"{unquote(context.group(1))}\x04" if context else "") + unquote(msgid.group(1))
            entries[key] = (
                unquote(msgstr.group(1)) if msgstr else "",
                unquote(plural.group(1)) if plural else None,
            )
    return entries


def unquote(text: str) -> str:
    return text.replace('\\"', '"')


def test_every_string_is_translated_and_compiled():
    entries = po_entries()
    assert len(entries) > 150
    assert [msgid for msgid, (msgstr, _plural) in entries.items() if not msgstr] == []
    with open(CATALOG / "django.mo", "rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)
    compiled_entries = {
        msgid: (catalog.ngettext(msgid, plural, 1) if plural else catalog.gettext(msgid), plural)
        for msgid, (_msgstr, plural) in entries.items()
    }
    assert compiled_entries == entries


def test_the_browser_language_is_the_default(review_queue, reviewer_client):
    chinese = reviewer_client.get(reverse("reviews:queue"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans">' in chinese and "审核队列" in chinese and "待审核" in chinese
    english = reviewer_client.get(reverse("reviews:queue"), HTTP_ACCEPT_LANGUAGE="en-US").content.decode()
    assert "Review queue" in english and "审核队列" not in english


def test_the_switcher_overrides_the_browser(review_queue, reviewer_client):
    response = reviewer_client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/review/stats/"})
    assert response.status_code == 302 and response["Location"] == "/review/stats/"
    html = reviewer_client.get("/review/stats/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "审核统计" in html


def test_messages_a_reviewer_sees_are_translated(review_queue, reviewer, second_reviewer_client):
    approve_as(reviewer, review_queue.evidence)
    second_reviewer_client.post("/i18n/setlang/", {"language": "zh-hans"})
    response = second_reviewer_client.post(
        reverse("reviews:candidate-reject", args=[review_queue.evidence.pk]), {"version": 1, "note": "不对"}
    )
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("rita 已先处理此条目：已批准（location = “Berlin”）")
    assert message.endswith("你的决定未被执行。")


def test_the_auditor_pages_speak_chinese_too(auditor_client):
    pages = {
        reverse("reviews:audit"): ["导出审计记录", "在后台导出"],
        reverse("reviews:audit-verify"): ["校验审计记录", "校验已存储的链"],
        reverse("reviews:recalls"): ["调用记录", "调用 API 的每一次回答"],
    }
    for url, phrases in pages.items():
        html = auditor_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
        assert all(phrase in html for phrase in phrases), url
        assert "Export the audit trail" not in html and "Verify the stored chain" not in html


def test_an_identifier_refusal_on_a_page_is_in_the_readers_language(auditor_client):
    # The SPEC §1 identifier rule's refusal, beside the recall records' user filter (400).
    for language, refusal in [
        ("zh-CN,zh;q=0.9", "用户只能包含可打印字符（不能有控制字符）。"),
        ("en-US", "The user must contain printable characters only (no control characters)."),
    ]:
        response = auditor_client.get(reverse("reviews:recalls"), {"user_id": "a\tb"}, HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 400 and refusal in response.content.decode(), language
    response = auditor_client.get(reverse("reviews:audit-download"), {"user_id": "AKIAIOSFODNN7EXAMPLE"},
                                  HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert response.status_code == 400 and "用户不能包含凭据；未保存任何内容。" in response.content.decode()


def test_the_portals_scope_refusals_are_in_chinese_too():
    from reviews.web.forms import EntityRefField
    from reviews.views.portal import ScopeForm

    with translation.override("zh-hans"):
        form = ScopeForm({"thread_id": "a\x00b", "entity": "project:a\tb"})
        assert not form.is_valid()
        assert form.errors["thread_id"] == ["对话只能包含可打印字符（不能有控制字符）。"]
        assert form.errors["entity"] == ["实体 ID只能包含可打印字符（不能有控制字符）。"]
        with pytest.raises(ValidationError) as refused:
            EntityRefField().clean("flask-migration")
        assert refused.value.messages == ["实体的写法是 类型:ID，例如 project:flask-migration。"]


def test_the_api_answers_identifier_refusals_in_english_whatever_the_language(tenant, make_client):
    # Its other messages (the domain's refusals) are English; an agent reads them, not a person.
    client = make_client(tenant, [Scope.RECALL])
    response = client.get("/api/v1/recall", {"user_id": "a\tb"}, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert response.status_code == 400
    assert "user_id must contain printable characters only (no control characters)." in response.content.decode()
    with translation.override("zh-hans"), pytest.raises(InvalidInput) as refused:
        validate_identifier("", name="thread_id")
    assert refused.value.message == "thread_id must not be empty."
