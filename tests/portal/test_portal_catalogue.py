"""Every label the subject's pages show exists in both languages (English and Simplified Chinese).

The labels are the schema's default labels (fields, relation names, entity types,
categories, sources: reviews/labels.py, shared with the reviewer queue and the stats),
the selectors' vocabularies (counts, questions, deletion scopes) and every entry of the
portal's catalog; a label added
without its translation fails here, not in front of a Chinese-speaking subject.
"""
import re
from pathlib import Path

import pytest
from django.utils import translation

from reviews import labels as schema_labels
from reviews.selectors import portal as portal_selectors
from reviews.models import Category, Source
from reviews.policy.schema import DEFAULT_FIELDS
from reviews.views import portal as portal_views

CATALOG = Path(__file__).resolve().parents[2] / "reviews" / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
CJK = re.compile(r"[\u3400-\u9fff]")


def labels():
    # The schema's labels (fields, relation names, entity types, categories, sources) are
    # shared by the portal, the reviewer queue and the stats (reviews/labels.py).
    yield from (("field", key, label) for key, label in schema_labels.DEFAULT_FIELD_LABELS.items())
    yield from (("relation", key, label) for key, label in schema_labels.DEFAULT_RELATION_LABELS.items())
    yield from (("entity type", key, label) for key, label in schema_labels.DEFAULT_ENTITY_TYPE_LABELS.items())
    yield from (("category label", key, label) for key, label in Category.choices)
    yield from (("source", key, label) for key, label in Source.choices)
    for category, heading, blurb in portal_selectors.SECTIONS:
        yield "category", category, heading
        yield "category blurb", category, blurb
    yield from (("count", key, label) for key, label in portal_selectors.COUNT_LABELS.items())
    yield from (("question", key, label) for key, label in portal_selectors.QUESTIONS.items())
    yield from (("scope", key, label) for key, label in portal_views.SCOPE_LABELS.items())


@pytest.mark.parametrize("kind,key,label", list(labels()), ids=lambda v: str(v)[:40])
def test_each_label_reads_in_english_and_chinese(kind, key, label):
    def read(label):
        return str(label % {"n": 2}) if kind == "count" else str(label)  # counts are plural forms

    with translation.override("en"):
        english = read(label)
    with translation.override("zh-hans"):
        chinese = read(label)
    assert english and not CJK.search(english), (kind, key, english)
    assert chinese != english and CJK.search(chinese), f"{kind} {key!r} has no Chinese label: {english!r}"


def test_every_default_field_and_category_has_a_label():
    assert {(entity_type, field) for entity_type, field, *_ in DEFAULT_FIELDS} <= set(schema_labels.DEFAULT_FIELD_LABELS)
    assert {entity_type for entity_type, *_ in DEFAULT_FIELDS} <= set(schema_labels.DEFAULT_ENTITY_TYPE_LABELS)
    assert {category for category, _, _ in portal_selectors.SECTIONS} == set(Category.values)


def test_the_portal_catalog_has_no_untranslated_or_fuzzy_entry():
    entries = [block for block in CATALOG.read_text(encoding="utf-8").split("\n\n") if not block.startswith("#~")]
    missing = [
        block.splitlines()[-1]
        for block in entries[1:]  # the header's msgstr is its metadata
        if "#, fuzzy" in block or re.search(r'^msgstr(\[\d\])? ""$', block, re.M) and not re.search(
            r'^msgstr(\[\d\])? ""\n"', block, re.M
        )
    ]
    assert not missing, missing
