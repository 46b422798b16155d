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
    from reviews.selectors import QueueItem

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
