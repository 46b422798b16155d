"""Templates compare with the closed vocabularies by member name, never by a literal value.

``{% if delivery.status == 'delivered' %}`` keeps working until someone renames the
value, then quietly never matches; ``DeliveryStatus.DELIVERED`` names the member
(reviews/web/context_processors.py puts the vocabularies in every page's context). Django
renders a misspelt member as an empty string, so the second test checks each one exists.
"""
import re
from pathlib import Path

from reviews.web.context_processors import VOCABULARIES

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# Attributes that hold a value of a closed vocabulary, wherever a template reads them.
VOCABULARY_ATTRIBUTES = ("status", "source", "scope", "sensitivity", "entity_type", "by", "set_by", "confirmed_by")
LITERAL_COMPARISON = re.compile(
    r"\.(?:%s)\s*(?:==|!=)\s*['\"]|['\"]\s*(?:==|!=)\s*[\w.]+\.(?:%s)\b"
    % ("|".join(VOCABULARY_ATTRIBUTES), "|".join(VOCABULARY_ATTRIBUTES))
)
MEMBER_REFERENCE = re.compile(r"\b(%s)\.([A-Za-z_]+)" % "|".join(VOCABULARIES))


def template_sources() -> dict[str, str]:
    return {str(path.relative_to(TEMPLATES)): path.read_text() for path in TEMPLATES.rglob("*.html")}


def test_no_template_compares_a_vocabulary_with_a_literal():
    offending = {name: LITERAL_COMPARISON.findall(text) for name, text in template_sources().items()}
    assert {name: found for name, found in offending.items() if found} == {}


def test_every_member_a_template_names_exists():
    named = {(name, vocabulary, member) for name, text in template_sources().items()
             for vocabulary, member in MEMBER_REFERENCE.findall(text)}
    assert len(named) > 20  # the pattern finds what the templates name
    missing = {(name, f"{vocabulary}.{member}") for name, vocabulary, member in named
               if member not in VOCABULARIES[vocabulary].__members__ and member not in ("label", "value")}
    assert missing == set()


def test_the_patterns_catch_what_they_are_for():
    assert LITERAL_COMPARISON.search('{% if delivery.status == "delivered" %}')
    assert LITERAL_COMPARISON.search("{% if 'thread' == item.scope %}")
    assert not LITERAL_COMPARISON.search("{% if delivery.status == DeliveryStatus.DELIVERED %}")
    assert MEMBER_REFERENCE.findall("{% if c.status == CandidateStatus.PENDNG_REVIEW %}") == [
        ("CandidateStatus", "PENDNG_REVIEW")]
