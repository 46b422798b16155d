"""How the queue's lines are rendered: parsed once, each line's values worked out once as plain
data (reviewer_tags.queue_line, conversation_view), every badge and conversation piece printed
escaped. The page's speed is measured by bench/review_queue.py; these hold what makes it cheap."""
import dataclasses
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from django.template import engines
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import override

from reviews.models import Candidate, Subject
from reviews.selectors.queue import ContextMessage, ConversationLine, QueueItem
from reviews.templatetags.reviewer_tags import conversation_view, queue_line


def an_item(**fields) -> QueueItem:
    candidate_fields = dict(pk=41, entity_type="user", entity_ref_id="eve", field="role", value="<b>lead</b>",
                            confidence=0.5, status="pending_review", flags=[], kind="fact", scope="long_term",
                            version=3, created_at=timezone.now() - timedelta(days=2))
    item_fields = {key: fields.pop(key) for key in list(fields) if key in {f.name for f in dataclasses.fields(QueueItem)}}
    candidate = Candidate(**{**candidate_fields, **fields})
    candidate.subject = Subject(user_id="eve")
    return QueueItem(candidate=candidate, **item_fields)


def render(name: str, **context) -> str:
    with override("en"):
        return engines["django"].get_template(name).render({"can_decide": True, "lazy_bodies": True, **context})


def test_templates_are_parsed_once_and_kept():
    """The cached loader is in force (django-template-partials wraps it): a queue page's
    template, and its item partial, come back as the same parsed template each time."""
    engine = engines["django"]
    assert engine.get_template("reviews/queue.html").template is engine.get_template("reviews/queue.html").template
    assert engine.get_template("reviews/queue.html#item").template is engine.get_template("reviews/queue.html#item").template


def plain(value) -> bool:
    """Nothing, text, a flag, a dict of text or a list of dicts of text: what the template
    reads without calling anything."""
    if value is None:
        return True
    if isinstance(value, (str, bool)):
        return not isinstance(value, Promise)
    if isinstance(value, dict):
        return all(plain(v) for v in value.values())
    if isinstance(value, list):
        return all(isinstance(entry, dict) and all(plain(v) for v in entry.values()) for entry in value)
    return False


def test_a_line_is_plain_data_with_ids_as_text():
    item = an_item(pk=1234567, version=12, flags=["unsupported"], claimed_by="reviewer:2", claimed_by_viewer=False)
    with override("zh-hans"):
        line = queue_line({"can_decide": True}, item)
    assert all(plain(value) for value in line.values()), {k: type(v) for k, v in line.items() if not plain(v)}
    assert line["pk"] == "1234567" and line["version"] == "12"  # never "1,234,567"
    assert line["body_url"].endswith("/1234567/body?version=12") and line["approve_url"].endswith("/1234567/approve")
    assert line["select_text"].startswith("选择 user:eve")


def test_the_line_follows_who_may_decide_and_what_the_item_is():
    assert queue_line({"can_decide": False}, an_item())["decidable"] is False
    conflict = queue_line({"can_decide": True}, an_item(conflict=object()))
    assert conflict["conflict"] and conflict["approve_url"].endswith("/41/settle")
    contested = queue_line({"can_decide": True}, an_item(flags=["contested"]))
    assert contested["contested"] and contested["defer_url"] == ""
    decided = queue_line({"can_decide": True}, an_item(status="pending_user"))
    assert decided["css"] == "item waiting" and decided["data_open"] == "0" and not decided["decidable"]
    assert queue_line({"can_decide": True}, an_item(status="approved"))["css"] == "item decided"


def test_each_badge_carries_the_data_attribute_the_script_finds_it_by():
    html = render("reviews/queue.html#item", item=an_item(flags=["unsupported", "contested"], claimed_by="bob",
                                                            claimed_by_viewer=False, kind="plan"))
    assert '<span class="badge pending" data-pending-note>' in html
    assert '<span class="badge contested" data-contested>' in html
    assert '<span class="badge conflict" data-flag="unsupported">' in html
    assert '<span class="badge claim" data-claim>claimed by bob</span>' in html
    assert '<span class="badge">plan</span>' in html  # a kind: no class, no data attribute
    mine = render("reviews/queue.html#item", item=an_item(claimed_by="me", claimed_by_viewer=True))
    assert '<span class="badge claim mine" data-claim>claimed by you</span>' in mine
    # The contested item: no "Ask the user", and the subject's word on the line.
    assert 'data-action="defer"' not in html and "data-subject-note-line" in html


def a_line(content: str, evidence: str, *, source=True) -> ConversationLine:
    from reviews.selectors.queue import evidence_segments

    message = ContextMessage(1, 1, "t", "m", "user", content, timezone.now())
    return ConversationLine(message=message, is_source=source,
                            segments=evidence_segments(content, evidence) if source else [(content, False)])


def test_a_conversation_line_marks_the_evidence_once_and_escapes_every_part():
    marked, whole, unmarked, context = conversation_view([
        a_line("I <3 living in Berlin, you know", "living in Berlin"),
        a_line("Berlin", "Berlin"),
        a_line("I live in Berlin", "Munich"),
        a_line("hello", "", source=False),
    ])
    assert (marked["before"], marked["marked"], marked["after"]) == ("I <3 ", "living in Berlin", ", you know")
    assert (whole["before"], whole["marked"], whole["after"]) == ("", "Berlin", "")
    assert (unmarked["before"], unmarked["marked"]) == ("I live in Berlin", "")
    assert not context["is_source"] and context["role"] == "User"
    lines = [a_line("I <3 living in Berlin, you know", "living in Berlin"), a_line("hello", "", source=False)]
    html = render("reviews/queue.html#conversation", lines=lines)
    assert '<span class="text">I &lt;3 <mark>living in Berlin</mark>, you know</span>' in html
    assert '<li class="source">' in html and '<li><span class="role">User</span><span class="text">hello</span>' in html


def test_a_group_is_named_and_summed_up_in_the_readers_language():
    from reviews.selectors.queue import QueueGroup
    from reviews.templatetags.reviewer_tags import group_texts

    lines = [a_line("hello", "", source=False), a_line("I live in Berlin", "Berlin")]
    with override("en"):
        assert group_texts(QueueGroup(1, "eve", "t-9", [], lines)) == {
            "label": "eve, thread t-9", "summary": "eve · thread t-9 · 2 messages"}
        assert group_texts(QueueGroup(1, "eve", "t-9", [], lines[:1]))["summary"] == "eve · thread t-9 · 1 message"
        assert group_texts(QueueGroup(1, "eve", "", [], []))["label"] == "eve"  # no thread: the user alone
    with override("zh-hans"):
        assert group_texts(QueueGroup(1, "eve", "t-9", [], lines))["summary"] == "eve · 会话 t-9 · 2 条消息"
    html = render("reviews/queue.html#group", group=QueueGroup(1, "<i>eve</i>", "t-9", [an_item()], lines))
    assert 'aria-label="&lt;i&gt;eve&lt;/i&gt;, thread t-9"' in html
    assert "<summary>&lt;i&gt;eve&lt;/i&gt; · thread t-9 · 2 messages</summary>" in html


def test_a_dropdown_selects_what_the_server_applies(tenant):
    from reviews.templatetags.reviewer_tags import select_options
    from reviews.views.reviewer import QueueFilterForm

    def selected(data, name):
        form = QueueFilterForm(data or None, tenant=tenant, initial={"status": "pending_review"})
        return [option["value"] for option in select_options(form[name]) if option["selected"]]

    assert selected({}, "status") == ["pending_review"]  # left out of the query: the default
    assert selected({"status": "open"}, "status") == ["open"]
    assert selected({"status": "open"}, "sort") == []  # none: the browser shows the first, the default
    assert selected({"sort": "newest"}, "sort") == ["newest"]
    with override("zh-hans"):
        texts = [option["text"] for option in select_options(QueueFilterForm(None, tenant=tenant)["sort"])]
    assert all(type(text) is str for text in texts) and "最早的在前" in texts  # translated once, as text


@pytest.mark.parametrize("language,said_at", [("en", "7 Mar 2026, 23:02 UTC"), ("zh-hans", "2026年3月7日 23:02 UTC")])
def test_a_conversation_lines_time_reads_as_every_staff_pages_times(language, said_at):
    """The selector hands the template a datetime; the moment filter, in the reader's
    language, is what shows it (no format of the queue's own)."""
    said = datetime(2026, 3, 7, 23, 2, 30, tzinfo=dt_timezone.utc)
    line = ConversationLine(message=ContextMessage(1, 1, "t", "m", "user", "hello", said), is_source=False,
                            segments=[("hello", False)])
    with override(language):
        html = engines["django"].get_template("reviews/queue.html#conversation").render({"lines": [line]})
    assert f'<time class="at" datetime="2026-03-07T23:02:30+00:00">{said_at}</time>' in html
