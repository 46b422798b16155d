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
