"""QuickSelect writes exactly what Django's Select renders through its templates."""
import pytest
from django import forms
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy, override

from reviews.web.widgets import QuickSelect

HOSTILE = '"><script>alert(1)</script>&amp;\'x'

CHOICES = [
    ("", gettext_lazy("any")),
    ("oldest", "oldest first"),
    (HOSTILE, HOSTILE),
    (3, "a number"),
]
GROUPED = [
    ("", "any"),
    ("Fields", [("name", "Name"), ("location", "<b>City</b>")]),
    (HOSTILE, [("x", "y")]),
]


def both(choices, **field_options):
    class Reference(forms.Form):
        pick = forms.ChoiceField(choices=choices, **field_options)

    class Quick(forms.Form):
        pick = forms.ChoiceField(choices=choices, widget=QuickSelect, **field_options)

    return Reference, Quick


@pytest.mark.parametrize(
    "choices, data, field_options",
    [
        (CHOICES, None, {}),
        (CHOICES, {"pick": "oldest"}, {}),
        (CHOICES, {"pick": HOSTILE}, {"required": False}),
        (CHOICES, {"pick": "not a choice"}, {}),  # an error: aria-invalid
        (CHOICES, {"pick": ""}, {"required": True}),
        (CHOICES, None, {"required": False, "help_text": "Pick one"}),  # aria-describedby
        (GROUPED, {"pick": "location"}, {}),
        ([(mark_safe("<i>safe</i>"), mark_safe("<i>safe</i>"))], None, {}),
    ],
)
def test_same_markup_as_djangos_select(choices, data, field_options):
    reference, quick = both(choices, **field_options)
    expected, got = reference(data), quick(data)
    if data is not None:
        expected.is_valid(), got.is_valid()
    assert str(got["pick"]) == str(expected["pick"])


def test_attributes_true_false_and_order_as_djangos():
    attrs = {"data-x": True, "disabled": False, "class": 'a"b', "aria-label": "<lab>"}
    assert QuickSelect(attrs=attrs, choices=CHOICES).render("n", "oldest") == forms.Select(
        attrs=attrs, choices=CHOICES
    ).render("n", "oldest")


def test_escapes_what_users_wrote():
    html = QuickSelect(choices=[(HOSTILE, HOSTILE)]).render(HOSTILE, HOSTILE)
    assert "<script>" not in html
    assert "&quot;&gt;&lt;script&gt;" in html
    assert "&amp;amp;" in html  # an entity typed by a user stays text


def test_translated_labels_follow_the_active_language():
    quick = QuickSelect(choices=[("", gettext_lazy("any"))])
    with override("zh-hans"):
        assert quick.render("n", "") == forms.Select(choices=[("", gettext_lazy("any"))]).render("n", "")
