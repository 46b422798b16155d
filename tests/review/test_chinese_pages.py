"""Finished Chinese (issue 38.5): every staff page and partial, rendered in Simplified
Chinese, has no English words left outside what users and admins wrote (values, ids,
codes, names) and an allow-list of brand names and units; and no ASCII space sits between
two Chinese characters (Chinese is written without them), within one element or across
the elements the text runs through as the page renders it."""
import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from reviews.actors import Actor
from reviews.models import AuditEvent
from reviews.services.comments import candidate_comment_add
from tests.review.conftest import signed_in

# What is not prose of the interface, so not translated: what users wrote (values, notes,
# messages), ids, codes and keys, times, and the names people and tenants are given.
SKIPPED_ELEMENTS = {"script", "style", "code", "kbd", "pre", "time", "option", "textarea", "svg"}
SKIPPED_CLASSES = {"text", "ref", "user", "value", "subject-note", "evidence", "who", "secret-key", "mono", "field"}
ALLOWED = {
    "Memory", "Portal",  # the product's name
    "English",  # the language switcher names each language in itself
    "Enter", "Ctrl", "Esc", "Tab",  # the keys' own names
    "API", "MCP", "JSON", "JSONL", "Lines", "CSV", "SHA", "LangGraph", "mem0", "HMAC", "URL", "ID", "LLM", "UTC",
    "Webhook", "Webhooks", "Standard",  # the term Chinese consoles keep (and the specification's name)
    "rules",  # the offline extractor's name
    # Names the fixtures give: the personas, the subject, the tenant ("Tenant One") and the
    # API key ("test"); a name is shown as it was given.
    "rita", "audrey", "adam", "alice", "tenant", "Tenant", "One", "test",
}
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef\u3000-\u303f"
SPACE_BETWEEN_CJK = re.compile(f"[{CJK}] +[{CJK}]")
ENGLISH_WORD = re.compile(r"^[A-Za-z][a-z]{2,}$")
# A value quoted in a sentence (“PostgreSQL”), and tokens that are identifiers, not words:
# references and codes (project:flask-migration, user.name, api_key:*, #12, v2).
QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")
IDENTIFIER = re.compile(r"[:._#/@*=\-\d]")


def english_words(text: str) -> list[str]:
    words = []
    for token in re.split(r"[\s,;()（）：；，。、·]+", QUOTED.sub(" ", text)):
        token = token.strip("!?！？…")
        if token and not IDENTIFIER.search(token) and ENGLISH_WORD.match(token) and token not in ALLOWED:
            words.append(token)
    return words


# Where the rendered text breaks (a block, a table cell, a control): words on either side
# are not in one run of text, so a space there is no space between them. Everything else
# (b, strong, a, span, code…) flows inline: "批准 <b>3 项</b> 条目" reads "批准 3 项 条目".
BREAKS = {
    "address", "article", "aside", "blockquote", "br", "button", "caption", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "img", "input", "legend", "li", "main", "nav", "ol", "option", "p", "pre", "section", "select", "summary",
    "table", "tbody", "td", "textarea", "tfoot", "th", "thead", "tr", "ul",
}
# Laid out as boxes of their own by app.css, so the space between them is a gap, not a
# space in a sentence: badges (pills), and the children of a flex container (a flex item's
# surrounding whitespace is not rendered): <nav>s and these classes.
BOXES = {"badge"}
FLEX = {"topnav", "tabs", "event-head", "chain-status", "fact-head"}
NOT_RENDERED = {"script", "style", "svg", "template", "title", "head"}
BREAK = "\x1e"  # not whitespace: the collapsing of spaces leaves it alone
# A space inside what users wrote is theirs: masked in the flattened text, so only the
# spaces the interface puts around a value or between its own words are judged.
THEIRS = "\u2423"


class VisibleText(HTMLParser):
    """The interface's own visible text (and what is read out: aria-label, placeholder),
    piece by piece, and the page's text as rendered (``flat``: the pieces joined across
    inline elements, as innerText reads them)."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[bool, bool]] = []  # whether each open element is skipped, not rendered
        self.texts: list[str] = []
        self.pieces: list[str] = []
        self.boxes: list[bool] = []  # whether each open element is laid out as a box of its own
        self.flex: list[bool] = []  # whether each open element is a flex container

    VOID = {"input", "br", "img", "meta", "link", "hr", "source", "col", "area", "base", "wbr", "track", "embed", "param"}

    @property
    def flat(self) -> str:
        return re.sub(r"[ \t\r\n\f]+", " ", "".join(self.pieces))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        skipped = (self.stack and self.stack[-1][0]) or tag in SKIPPED_ELEMENTS or bool(classes & SKIPPED_CLASSES) \
            or "data-value" in attrs or "data-subject-note" in attrs
        hidden = (self.stack and self.stack[-1][1]) or tag in NOT_RENDERED
        if not skipped:
            # A title shows the stored code behind a label on purpose; these are read out.
            for name in ("aria-label", "placeholder"):
                if attrs.get(name):
                    self.texts.append(attrs[name])
        box = tag in BREAKS or bool(classes & BOXES) or bool(self.flex and self.flex[-1])
        if box:
            self.pieces.append(BREAK)
        if tag not in self.VOID:
            self.stack.append((bool(skipped), bool(hidden)))
            self.boxes.append(box)
            self.flex.append(tag == "nav" or bool(classes & FLEX))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()
            self.flex.pop()
            if self.boxes.pop():
                self.pieces.append(BREAK)
        elif tag in BREAKS:
            self.pieces.append(BREAK)

    def handle_data(self, data):
        skipped, hidden = self.stack[-1] if self.stack else (False, False)
        if hidden:
            return
        if not skipped and data.strip():
            self.texts.append(data.strip())
        if skipped:
            data = " ".join(data.split()).replace(" ", THEIRS) if data.strip() else data
        self.pieces.append(data)


def problems_in(html: str, *, english: bool = True) -> list[str]:
    """What is unfinished: English words of the interface (``english``), and ASCII spaces
    between Chinese characters."""
    parser = VisibleText()
    parser.feed(html)
    found = []
    for text in parser.texts:
        words = english_words(text) if english else []
        if words:
            found.append(f"English {words}: {text[:120]!r}")
        if SPACE_BETWEEN_CJK.search(text):
            found.append(f"space between Chinese characters: {text[:120]!r}")
    # The same across elements: the space a template puts between two of its words, or
    # around a value, where one element ends and the next begins.
    for line in parser.flat.split(BREAK):
        for match in SPACE_BETWEEN_CJK.finditer(line):
            if not any(match.group() in text for text in parser.texts):  # reported above already
                start = max(match.start() - 20, 0)
                found.append(f"space between Chinese characters across elements: {line[start:match.end() + 20]!r}")
    return found


@pytest.fixture
def pages(review_queue, reviewer, auditor, tenant_admin):
    item = review_queue.conflict
    return [
        (reviewer, reverse("reviews:queue"), {}),
        (reviewer, reverse("reviews:queue-counts"), {"HX-Request": "true"}),
        (reviewer, reverse("reviews:queue-counts"), {}),
        (reviewer, reverse("reviews:stats"), {}),
        (reviewer, reverse("reviews:candidate", args=[item.pk]), {}),
        (reviewer, reverse("reviews:candidate", args=[review_queue.new_entity.pk]), {}),
        (reviewer, reverse("reviews:entity", args=[review_queue.new_entity.entity_id]), {}),
        (reviewer, reverse("reviews:bulk-select"), {}),
        (auditor, reverse("reviews:audit"), {}),
        (auditor, reverse("reviews:audit-log"), {}),
        (auditor, reverse("reviews:audit-verify"), {}),
        (auditor, reverse("reviews:recalls"), {}),
        (tenant_admin, reverse("reviews:tenant-schema"), {}),
        (tenant_admin, reverse("reviews:tenant-policy"), {}),
        (tenant_admin, reverse("reviews:tenant-extractor"), {}),
        (tenant_admin, reverse("reviews:tenant-keys"), {}),
        (tenant_admin, reverse("reviews:tenant-staff"), {}),
        (tenant_admin, reverse("reviews:tenant-webhooks"), {}),
        (reviewer, reverse("reviews:my-decisions"), {}),
        (reviewer, reverse("reviews:saved-views"), {}),
    ]


def test_every_staff_page_is_finished_in_chinese(pages, review_queue, reviewer):
    # Some history to show: a decision in the audit log and on the item's own page.
    client = signed_in(reviewer)
    client.post(reverse("reviews:candidate-approve", args=[review_queue.evidence.pk]),
                {"version": review_queue.evidence.version})
    assert AuditEvent.objects.filter(action="candidate.approved").exists()
    # And a comment on the conflict's own page, under its history.
    candidate_comment_add(tenant=reviewer.membership.tenant, candidate_id=review_queue.conflict.pk, author=reviewer,
                          body="Which one did the user mean?", actor=Actor.reviewer(reviewer))
    found = {}
    for user, path, headers in pages:
        client = signed_in(user, HTTP_ACCEPT_LANGUAGE="zh-hans")
        client.cookies["django_language"] = "zh-hans"
        response = client.get(path, headers=headers)
        assert response.status_code in (200, 400), (path, response.status_code)
        problems = problems_in(response.content.decode())
        if problems:
            found[f"{user.username} {path} {headers}"] = problems
    assert not found, "\n".join(f"{page}:\n  " + "\n  ".join(problems) for page, problems in found.items())


def test_the_check_finds_english_and_spaces_and_lets_values_be():
    assert problems_in("<p>Approved 已批准</p>")
    assert problems_in("<p>已批准 的值</p>")
    # Across elements: between two of the interface's words, and around a value.
    assert problems_in("<p>批准 <b>全部</b> 条目</p>")
    assert problems_in('<p>已批准 <span class="text">小李</span></p>')
    assert not problems_in("<p>等待 <b>3</b> 条</p>")  # a number between: spaced as Chinese text may be
    assert not problems_in("<td>批准</td> <td>条目</td>")  # separate cells
    assert not problems_in('<nav><a href="/">队列</a> <a href="/s">统计</a></nav>')  # flex items: a gap
    assert not problems_in('<p>已批准：<span class="text">北京 上海</span></p>')  # the user's own space
    assert problems_in('<input placeholder="Search">')
    assert not problems_in('<p>已批准：<span class="text">Berlin is nice</span></p>')
    assert not problems_in("<p>Memory Portal · 审核队列 API</p>")
