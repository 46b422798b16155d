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


@pytest.mark.parametrize("ago", [timedelta(seconds=5), timedelta(hours=3, minutes=2), timedelta(days=3, hours=4), timedelta(days=400)])
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_age_is_the_first_unit_of_timesince(ago, language):
    moment = timezone.now() - ago
    with override(language):
        first_unit = timesince(moment).replace("，", ",").split(",")[0]  # Chinese joins units with "，"
        assert age(moment) == first_unit
        assert "," not in age(moment) and "，" not in age(moment)


def test_age_of_nothing_is_empty():
    assert age(None) == ""


def line(item, label="Role <i>", **context):
    from reviews.templatetags.reviewer_tags import line_summary

    return str(line_summary({"can_decide": True, **context}, item, label))


def an_item(**candidate_fields):
    from reviews.models import Candidate, Subject
    from reviews.selectors.queue import QueueItem

    fields = dict(pk=7, entity_type="user", entity_ref_id="<b>eve</b>", field="role", value='"><script>x</script>',
                  confidence=0.5, status="pending_review", flags=[], kind="fact", scope="long_term", version=1,
                  created_at=timezone.now() - timedelta(days=3))
    candidate = Candidate(**{**fields, **candidate_fields})
    candidate.subject = Subject(user_id="<u>eve</u>")
    return QueueItem(candidate=candidate)


def test_the_line_summary_escapes_what_users_and_admins_wrote():
    html = line(an_item())
    assert "<script>" not in html and "<b>" not in html and "<u>" not in html and "<i>" not in html
    assert "&quot;&gt;&lt;script&gt;x&lt;/script&gt;" in html and "user:&lt;b&gt;eve&lt;/b&gt;" in html
    assert 'title="role">Role &lt;i&gt;</span>' in html and '<span class="user">&lt;u&gt;eve&lt;/u&gt;</span>' in html


def test_the_line_summary_prints_numbers_unlocalised_and_names_the_user_only_without_a_conversation():
    item = an_item(confidence=0.875)
    with override("zh-hans"):
        html = line(item)
        three_days = age(item.candidate.created_at)
    assert 'value="0.88" aria-hidden="true"></meter>0.88</span>' in html and 'id="item-7-title"' in html
    assert 'title="置信度"' in html and f">{three_days}</time>" in html and three_days.startswith("3")
    item.conversation = ["a line of the thread"]
    assert 'class="user"' not in line(item)


def head(item, label="Role <i>", language="en", **context):
    from reviews.templatetags.reviewer_tags import item_head

    with override(language):
        return str(item_head({"can_decide": True, "lazy_bodies": True, **context}, item, label))


def test_the_item_head_names_its_checkbox_with_escaped_values_in_the_readers_language():
    html = head(an_item(pk=12345, version=3))
    assert '<input type="checkbox" name="selected" value="12345:3" form="bulk-form" data-select>' in html
    assert ("Select user:&lt;b&gt;eve&lt;/b&gt; Role &lt;i&gt; “&quot;&gt;&lt;script&gt;x&lt;/script&gt;”"
            in html)
    assert "<script>" not in html and "<b>" not in html and "<i>" not in html
    assert "选择 user:&lt;b&gt;eve&lt;/b&gt;" in head(an_item(), language="zh-hans")
    # Nobody may decide it (an auditor, or a decided item): no checkbox at all.
    assert 'data-select' not in head(an_item(), can_decide=False)
    assert 'data-select' not in head(an_item(status="approved"))


def test_the_item_head_carries_the_outcome_and_its_notice_unless_it_succeeded():
    from reviews.models import Notice

    stale = head(an_item(), notice="Moved by <b>bob</b>", notice_level=Notice.STALE, oob=True)
    assert 'data-outcome="stale"' in stale and 'hx-swap-oob="true"' in stale
    assert '<p class="notice stale" role="status" data-notice="stale">Moved by &lt;b&gt;bob&lt;/b&gt;</p>' in stale
    done = head(an_item(status="approved"), notice="Approved.", notice_level=Notice.SUCCESS)
    assert 'data-outcome="success"' in done and "Approved." not in done and 'class="item decided"' in done
    quiet = head(an_item())
    assert "data-outcome" not in quiet and "hx-swap-oob" not in quiet and 'data-open="1"' in quiet


def test_the_item_head_fetches_its_body_on_a_list_and_holds_it_open_on_its_own_page():
    from reviews.templatetags.reviewer_tags import candidate_url

    listed = head(an_item(pk=9, version=2))
    assert f'hx-get="{candidate_url(9, "body")}?version=2" hx-trigger="fetch-body"' in listed
    assert '<details class="expand" data-expand open>' in head(an_item(), lazy_bodies=False, expanded=True)
    assert '<details class="expand" data-expand>' in head(an_item(), lazy_bodies=False)
    assert 'id="item-9-title"' in listed and 'aria-labelledby="item-9-title"' in listed  # the line names the item


def test_a_listed_items_body_links_to_its_own_page_in_the_readers_language():
    from reviews.templatetags.reviewer_tags import body_pending, candidate_url

    item = an_item(pk=1234567)
    with override("en"):
        html = str(body_pending(item.candidate))
    assert html == (f'<p class="meta" data-body-pending><a href="{candidate_url(1234567)}">'
                    "Open item #1234567: its context and every action</a></p>")  # the id unlocalised
    with override("zh-hans"):
        assert "打开条目 #1234567" in str(body_pending(item.candidate))
