"""Every string the pages and the API mark for translation reads in Chinese.

The two catalogs' own tests (tests/review/test_i18n.py, tests/portal/test_portal_catalogue.py)
hold that each entry is translated and compiled; they cannot see a string that was never
extracted into either. That happened: the portal's conflict notice and four of its error
messages, and the audit export's states, showed in English on Chinese pages. This test reads
the marked strings from the sources themselves (``{% translate %}``, simple
``{% blocktranslate %}`` blocks, and the gettext family's calls with a literal) and asks
Django for each in Chinese, through both catalogs as a page would.

Management commands are left out: they print English for the operator.
"""
import ast
import re
from pathlib import Path

from django.utils import translation

ROOT = Path(__file__).resolve().parents[2]
TRANSLATE = re.compile(r'\{%\s*(?:translate|trans)\s+"((?:[^"\\]|\\.)*)"(?:\s+context\s+"([^"]*)")?')
BLOCK = re.compile(
    r"\{%\s*blocktrans(?:late)?(?P<arguments>[^%]*)%\}(?P<body>.*?)\{%\s*endblocktrans(?:late)?\s*%\}", re.S
)
# Function name -> (position of the message, position of the context or None).
GETTEXT_CALLS = {
    "gettext": (0, None), "gettext_lazy": (0, None), "gettext_noop": (0, None), "_": (0, None),
    "pgettext": (1, 0), "pgettext_lazy": (1, 0),
}


def template_strings():
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text, where = path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))
        for found in TRANSLATE.finditer(text):
            yield where, found.group(2) or "", found.group(1).replace('\\"', '"')
        for found in BLOCK.finditer(text):
            arguments, body = found.group("arguments"), found.group("body")
            if "count" in arguments.split() or "{%" in body:  # plural forms and nested tags: not read here
                continue
            if "trimmed" in arguments.split():
                body = " ".join(line.strip() for line in body.strip().splitlines())
            context = re.search(r'context\s+"([^"]*)"', arguments)
            message = re.sub(r"\{\{\s*(\w+)\s*\}\}", r"%(\1)s", body.replace("%", "%%"))
            yield where, context.group(1) if context else "", message


def python_strings():
    for path in sorted((ROOT / "reviews").rglob("*.py")):
        if {"migrations", "management"} & set(path.parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in GETTEXT_CALLS:
                continue
            message_at, context_at = GETTEXT_CALLS[name]
            literal = node.args[message_at] if len(node.args) > message_at else None
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                context = node.args[context_at].value if context_at is not None else ""
                yield f"{path.relative_to(ROOT)}:{node.lineno}", context, literal.value


def test_every_marked_string_reads_in_chinese():
    strings = [*template_strings(), *python_strings()]
    assert len(strings) > 1000  # the patterns find what the sources mark
    untranslated = []
    with translation.override("zh-hans"):
        for where, context, message in strings:
            if not re.search(r"[A-Za-z]", message):
                continue
            shown = translation.pgettext(context, message) if context else translation.gettext(message)
            if shown == message:
                untranslated.append((where, message[:80]))
    assert untranslated == []


def test_the_reader_finds_each_kind_of_mark():
    templates = {message for _, _, message in template_strings()}
    python = {(context, message) for _, context, message in python_strings()}
    assert "Our team is checking" in templates  # {% translate %}
    assert "You said this %(when)s in a chat." in templates  # {% blocktranslate asvar %}
    assert ("audit action", "Comment added") in python  # pgettext_lazy
    assert ("", "This item is waiting for a reviewer, not for you.") in python  # gettext_noop
