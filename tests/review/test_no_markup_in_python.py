"""Markup lives in templates: no Python module of the app builds HTML by hand.

Template tags and views give data; templates (with django-template-partials) print it,
escaped by {{ }}. A ``mark_safe``, a ``format_html`` or an f-string holding a tag is HTML
built in Python: an XSS review surface that cannot be edited as a template.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [path for folder in ("reviews", "memory_portal") for path in (ROOT / folder).rglob("*.py")
           if "migrations" not in path.parts]

# HTML's elements, as a page of this app uses them (a placeholder such as "<API key>" is no tag).
TAGS = (r"(?:a|b|i|p|h[1-6]|li|ul|ol|dl|dt|dd|div|span|br|hr|strong|em|code|pre|q|blockquote|input|textarea|form"
        r"|button|select|option|optgroup|table|thead|tbody|tr|td|th|article|section|details|summary|label|time"
        r"|mark|kbd|meter|script|style|img|svg|template|dialog|nav|header|footer|main|aside|small|sup|sub)")

FORBIDDEN = [
    (re.compile(r"\bmark_safe\b"), "mark_safe"),
    (re.compile(r"\bformat_html(_join)?\b"), "format_html"),
    (re.compile(r"\bSafeString\b|\bSafeText\b"), "a SafeString made in Python"),
    # An f-string (or %-formatted / .format()ted string) that opens or closes an HTML tag.
    (re.compile(r"""\bf['"]{1,3}[^'"]*</?""" + TAGS + r"""[\s>/]"""), "an f-string holding a tag"),
    (re.compile(r"""(['"])[^'"\n]*</?""" + TAGS + r"""\b[^'"\n]*\1\s*(%|\.format\()"""),
     "a formatted string holding a tag"),
]


def test_the_sources_are_found():
    assert any(path.name == "reviewer_tags.py" for path in SOURCES)


def test_no_module_builds_html_by_hand():
    found = []
    for path in SOURCES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, what in FORBIDDEN:
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}")
    assert not found, "HTML built in Python (move it to a template):\n" + "\n".join(found)


def test_the_check_finds_what_it_forbids():
    """The patterns catch the shapes they name, so an empty result above means something."""
    samples = [
        "return mark_safe(text)",
        "from django.utils.html import format_html",
        "x = f'<span class=\"badge\">{text}</span>'",
        "x = '<li>%s</li>' % text",
    ]
    for sample in samples:
        assert any(pattern.search(sample) for pattern, _ in FORBIDDEN), sample
    for harmless in ('label = f"{count:,}+"', 'f"Authorization: Bearer <API key>"'):
        assert not any(pattern.search(harmless) for pattern, _ in FORBIDDEN), harmless
