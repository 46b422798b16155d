"""The queue line's filters: the same text as the Django filters they stand in for."""
import unicodedata
from datetime import timedelta

import pytest
from django.template.defaultfilters import truncatechars
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import override

from reviews.templatetags.reviewer_tags import age, clip


@pytest.mark.parametrize(
    "text, length",
    [
        ("short", 40),
        ("x" * 40, 40),
        ("x" * 41, 40),
        ("a long value " * 10, 60),
        ("中文的值" * 20, 40),
        (unicodedata.normalize("NFD", "café " * 12), 60),  # decomposed: normalised as truncatechars does
        ("", 40),
    ],
)
def test_clip_is_truncatechars(text, length):
    assert clip(text, length) == truncatechars(text, length)


@pytest.mark.parametrize("ago", [timedelta(minutes=2), timedelta(hours=3, minutes=2), timedelta(days=3, hours=4), timedelta(days=400)])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_age_is_the_first_unit_of_timesince(ago, language):
    moment = timezone.now() - ago
    with override(language):
        first_unit = timesince(moment).replace("，", ",").split(",")[0]  # Chinese joins units with "，"
        assert age(moment) == first_unit
        assert "," not in age(moment) and "，" not in age(moment)


def test_age_of_nothing_is_empty():
    assert age(None) == ""


def test_an_age_under_a_minute_says_so_rather_than_zero_minutes():
    with override("en"):
        assert age(timezone.now() - timedelta(seconds=5)) == "less than a minute"


def an_item(**candidate_fields):
    from reviews.models import Candidate, Subject
    from reviews.selectors.queue import QueueItem

    fields = dict(pk=7, entity_type="user", entity_ref_id="<b>eve</b>", field="role", value='"><script>x</script>',
                  confidence=0.5, status="pending_review", flags=[], kind="fact", scope="long_term", version=1,
                  created_at=timezone.now() - timedelta(days=3))
    candidate = Candidate(**{**fields, **candidate_fields})
    candidate.subject = Subject(user_id="<u>eve</u>")
    return QueueItem(candidate=candidate)


def item_html(item, language="en", **context):
    """The queue item's partial (reviews/queue.html#item), as a listed page renders it."""
    from django.template.loader import get_template

    with override(language):
        return get_template("reviews/queue.html#item").render({"can_decide": True, "lazy_bodies": True, "item": item, **context})


def test_the_row_escapes_what_users_wrote():
    html = item_html(an_item())
    assert "<script>" not in html and "<b>" not in html and "<u>" not in html
    assert "&quot;&gt;&lt;script&gt;x&lt;/script&gt;" in html and "user:&lt;b&gt;eve&lt;/b&gt;" in html
    assert '<span class="user">&lt;u&gt;eve&lt;/u&gt;</span>' in html


def test_the_row_prints_numbers_unlocalised_and_names_the_user_only_without_a_conversation():
    item = an_item(confidence=0.875)
    html = item_html(item, language="zh-hans")
    with override("zh-hans"):
        three_days = age(item.candidate.created_at)
    assert 'value="0.88" aria-hidden="true"></meter>0.88</span>' in html and 'id="item-7-title"' in html
    assert 'title="置信度"' in html and f">{three_days}</time>" in html and three_days.startswith("3")
    item.conversation = ["a line of the thread"]
    assert 'class="user"' not in item_html(item)


def test_the_row_shows_the_whole_value_however_long():
    long_value = "a value that goes on " * 20
    html = item_html(an_item(value=long_value))
    # Inside the revealed-text span the opened item uses too (nothing hidden or look-alike here).
    assert f'data-value><span class="text revealed">{long_value}</span></span>' in html


def test_the_checkbox_is_named_with_escaped_values_in_the_readers_language():
    html = item_html(an_item(pk=12345, version=3))
    assert '<input type="checkbox" name="selected" value="12345:3" form="bulk-form" data-select>' in html
    assert "Select user:&lt;b&gt;eve&lt;/b&gt; Role “&quot;&gt;&lt;script&gt;x&lt;/script&gt;”" in html
    assert "选择 user:&lt;b&gt;eve&lt;/b&gt;" in item_html(an_item(), language="zh-hans")
    # Nobody may decide it (an auditor, or a decided item): no checkbox at all.
    assert "data-select" not in item_html(an_item(), can_decide=False)
    assert "data-select" not in item_html(an_item(status="approved"))


def test_the_item_carries_the_outcome_and_its_notice_unless_it_succeeded():
    from reviews.models import Notice

    stale = item_html(an_item(), notice="Moved by <b>bob</b>", notice_level=Notice.STALE, oob=True)
    assert 'data-outcome="stale"' in stale and 'hx-swap-oob="true"' in stale
    assert '<p class="notice stale" role="status" data-notice="stale">Moved by &lt;b&gt;bob&lt;/b&gt;</p>' in stale
    done = item_html(an_item(status="approved"), notice="Approved.", notice_level=Notice.SUCCESS)
    assert 'data-outcome="success"' in done and "Approved." not in done and 'class="item decided"' in done
    quiet = item_html(an_item())
    assert "data-outcome" not in quiet and "hx-swap-oob" not in quiet and 'data-open="1"' in quiet


def test_the_item_fetches_its_body_on_a_list_and_links_to_its_own_page():
    from reviews.templatetags.reviewer_tags import candidate_url

    listed = item_html(an_item(pk=1234567, version=2))
    assert f'hx-get="{candidate_url(1234567, "body")}?version=2" hx-trigger="fetch-body"' in listed
    assert 'id="item-1234567-title"' in listed and 'aria-labelledby="item-1234567-title"' in listed
    assert (f'<p class="meta" data-body-pending><a href="{candidate_url(1234567)}">'
            "Open item #1234567: its context and every action</a></p>") in listed  # the id unlocalised
    assert "打开条目 #1234567" in item_html(an_item(pk=1234567), language="zh-hans")


def test_the_quick_decisions_are_offered_only_to_a_decider_and_not_ask_the_user_on_a_contested_item():
    from reviews.templatetags.reviewer_tags import candidate_url

    html = item_html(an_item(pk=5, version=4))
    assert f'action="{candidate_url(5, "approve")}"' in html and f'action="{candidate_url(5, "defer")}"' in html
    assert '<input type="hidden" name="version" value="4">' in html
    assert 'data-action="approve"' not in item_html(an_item(), can_decide=False)
    contested = item_html(an_item(flags=["contested"]))
    assert 'data-action="approve"' in contested and 'data-action="defer"' not in contested


@pytest.mark.parametrize(
    "current, proposed, marked_current, marked_proposed",
    [
        ("Berlin", "Berlin", [], []),
        ("lives in Berlin", "lives in Munich", ["Berlin"], ["Munich"]),
        ("MySQL 5.7", "PostgreSQL 16", ["MySQL", "5", "7"], ["PostgreSQL", "16"]),
        ("住在北京市", "住在上海市", ["北京"], ["上海"]),
        ("", "new", [], ["new"]),
    ],
)
def test_a_conflicts_values_are_cut_into_what_is_the_same_and_what_differs(current, proposed, marked_current, marked_proposed):
    from reviews.templatetags.reviewer_tags import value_diff

    diff = value_diff(current, proposed)
    assert "".join(piece.text for piece in diff.current) == current  # nothing lost or added
    assert "".join(piece.text for piece in diff.proposed) == proposed
    changed_current = " ".join(piece.text for piece in diff.current if piece.changed)
    changed_proposed = " ".join(piece.text for piece in diff.proposed if piece.changed)
    for word in marked_current:
        assert word in changed_current
    for word in marked_proposed:
        assert word in changed_proposed
    if current == proposed:
        assert not changed_current and not changed_proposed
