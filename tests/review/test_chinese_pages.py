"""Finished Chinese (issue 38.5): every staff page and partial, rendered in Simplified
Chinese, has no English words left outside what users and admins wrote (values, ids,
codes, names) and an allow-list of brand names and units; and no ASCII space sits between
two Chinese characters (Chinese is written without them)."""
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


class VisibleText(HTMLParser):
    """The interface's own visible text (and what is read out: aria-label, placeholder)."""

    def __init__(self):
        super().__init__()
        self.stack: list[bool] = []  # whether each open element is skipped
        self.texts: list[str] = []

    VOID = {"input", "br", "img", "meta", "link", "hr", "source", "col", "area", "base", "wbr", "track", "embed", "param"}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        skipped = (self.stack and self.stack[-1]) or tag in SKIPPED_ELEMENTS or bool(classes & SKIPPED_CLASSES) \
            or "data-value" in attrs or "data-subject-note" in attrs
        if not skipped:
            # A title shows the stored code behind a label on purpose; these are read out.
            for name in ("aria-label", "placeholder"):
                if attrs.get(name):
                    self.texts.append(attrs[name])
        if tag not in self.VOID:
            self.stack.append(bool(skipped))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.texts.append(data.strip())


def problems_in(html: str) -> list[str]:
    parser = VisibleText()
    parser.feed(html)
    found = []
    for text in parser.texts:
        english = english_words(text)
        if english:
            found.append(f"English {english}: {text[:120]!r}")
        if SPACE_BETWEEN_CJK.search(text):
            found.append(f"space between Chinese characters: {text[:120]!r}")
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
    assert problems_in('<input placeholder="Search">')
    assert not problems_in('<p>已批准：<span class="text">Berlin is nice</span></p>')
    assert not problems_in("<p>Memory Portal · 审核队列 API</p>")
