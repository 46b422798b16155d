"""What the page fuzzer needs: hostile values, a crawler that finds every form and link a
persona can reach, and a state digest to prove a refused input changed nothing."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from urllib.parse import parse_qsl, quote_plus, urlsplit

from django.contrib.messages import constants as message_levels
from django.contrib.messages import get_messages
from django.forms import BaseForm
from django.test.utils import ContextList
from django.urls import Resolver404, resolve

from tests.dump import table_digests

# Each alone in one field, then all fields at once. Strings are sent as UTF-8 with lone
# surrogates passed through as their (invalid) bytes, %ED%A0%80 in the raw query or body.
HOSTILE = {
    "nul": "a\x00b",
    "lone surrogate": "\ud800",
    "invalid utf-8": b"\xff\xfe",
    "100k characters": "x" * 100_000,
    "path traversal": "../../../etc/passwd",
    "script": '<script>alert(1)</script>"\'>',
    "img onerror": '"><img src=x onerror=alert(1)>',
    "sql": "' OR '1'='1'; DROP TABLE reviews_fact; --",
    "right-to-left override": "\u202egnp.exe",
    "zero-width": "a\u200bb\u200d\ufeff",
    "huge number": "9" * 40,
    "negative": "-1",
    "float overflow": "1e309",
    "not a number": "NaN",
    "malformed date": "2026-02-30T25:61:00+99:00",
    "chinese": "张三/项目",
    "control characters": "\x01\x1b[31m\r\n",
    "aws key": "my key is AKIAIOSFODNN7EXAMPLE",
    "password": "password: hunter2",
    "empty": "",
}
# What the credentials above leave in a table if they were stored raw.
CREDENTIAL_MARKS = ("AKIAIOSFODNN7EXAMPLE", "hunter2")
# What the markup above looks like when a page prints it unescaped.
UNESCAPED_MARKS = ("<script>alert(1)", "<img src=x onerror=alert(1)>")
ARRAY = "array (the field repeated)"

# Pages whose visit has an effect the fuzzer must not trigger by following a link.
NOT_FOLLOWED = ("/logout/", "/me/sign-out/", "/i18n/", "/admin/", "/static/", "/api/", "/compat/")


def encode_value(value: str | bytes) -> str:
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return quote_plus(raw)


def form_body(pairs: list[tuple[str, str | bytes]]) -> bytes:
    return "&".join(f"{encode_value(name)}={encode_value(value)}" for name, value in pairs).encode()


MULTIPART_BOUNDARY = "fuzz-boundary-7d1c"


def multipart_body(pairs: list[tuple[str, str | bytes]], files: dict[str, bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body (with its content type) carrying values as raw bytes,
    which the test client's encoder refuses for lone surrogates."""
    def raw(value):
        return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")

    parts = [
        b'Content-Disposition: form-data; name="%s"\r\n\r\n%s' % (raw(name), raw(value)) for name, value in pairs
    ] + [
        b'Content-Disposition: form-data; name="%s"; filename="export.jsonl"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n%s" % (raw(name), content)
        for name, content in files.items()
    ]
    boundary = MULTIPART_BOUNDARY.encode()
    body = b"".join(b"--%s\r\n%s\r\n" % (boundary, part) for part in parts) + b"--%s--\r\n" % boundary
    return body, f"multipart/form-data; boundary={MULTIPART_BOUNDARY}"


@dataclass
class Form:
    action: str  # a path
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    htmx: bool = False  # hx-post/hx-get: with JavaScript the browser sends it as an htmx request
    kinds: dict[str, str] = field(default_factory=dict)  # name → text, hidden, select, textarea, checkbox…
    page: str = ""  # where it was found
    # Other submit buttons of a name already sent (approve / reject): each a way to send it.
    alternatives: list[tuple[str, str]] = field(default_factory=list)
    # Buttons that send the form elsewhere (formaction, formmethod): (action, method, name, value).
    redirected: list[tuple[str, str, str, str]] = field(default_factory=list)

    @property
    def key(self):
        return (self.method, self.action, tuple(sorted({name for name, _ in self.fields})))

    def names(self) -> list[str]:
        return list(dict.fromkeys(name for name, _ in self.fields))

    def variants(self) -> list[Form]:
        """The form as each of its submit buttons sends it."""
        others = [
            replace(self, fields=[(n, value if n == name else v) for n, v in self.fields], alternatives=[])
            for name, value in self.alternatives
        ]
        elsewhere = [
            replace(self, action=action, method=method, fields=[*self.fields, (name, value)] if name else self.fields,
                    alternatives=[], redirected=[])
            for action, method, name, value in self.redirected
        ]
        return [replace(self, alternatives=[], redirected=[]), *others, *elsewhere]


class _PageParser(HTMLParser):
    """Forms with the values a browser would send: inputs, the selected option, textareas,
    one value per submit button name, and inputs outside a form that join it by
    ``form="id"``."""

    def __init__(self, page_path: str):
        super().__init__(convert_charrefs=True)
        self.page_path = page_path
        self.forms: list[Form] = []
        self.links: list[str] = []
        self._form: Form | None = None
        self._by_id: dict[str, Form] = {}
        self._joining: list[tuple[str, str, dict]] = []  # (form id, tag, attributes) seen before their form
        self._select: tuple[Form, str, str | None] | None = None
        self._textarea: tuple[Form, str] | None = None
        self._text = ""
        self._buttons: dict[int, set[str]] = {}

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "option" and self._select is not None:
            form, name, chosen = self._select
            if chosen is None or "selected" in a:
                self._select = (form, name, a.get("value", ""))
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "form":
            self._form = Form(action=a.get("action") or self.page_path, method=(a.get("method") or "get").upper(),
                              htmx=bool(a.get("hx-post") or a.get("hx-get")))
            if a.get("id"):
                self._by_id[a["id"]] = self._form
        elif tag in ("input", "button", "select", "textarea") and a.get("name"):
            owner = self._by_id.get(a["form"]) if a.get("form") else self._form
            if owner is None and a.get("form"):
                self._joining.append((a["form"], tag, a))
            elif owner is not None:
                self._field(owner, tag, a)

    def _field(self, form: Form, tag: str, a: dict) -> None:
        name = a["name"]
        kind = a.get("type", "text").lower() if tag == "input" else tag
        form.kinds.setdefault(name, kind)
        buttons = self._buttons.setdefault(id(form), set())
        if kind == "file":
            form.files.append(name)
        elif kind in ("checkbox", "radio"):
            if "checked" in a or not any(n == name for n, _ in form.fields):
                form.fields = [(n, v) for n, v in form.fields if n != name or kind == "checkbox"]
                form.fields.append((name, a.get("value", "on")))
        elif kind in ("submit", "button", "image", "reset") and (a.get("formaction") or a.get("formmethod")):
            form.redirected.append((a.get("formaction") or form.action, (a.get("formmethod") or form.method).upper(),
                                    name, a.get("value", "")))
        elif kind in ("submit", "button", "image", "reset"):
            if name not in buttons:
                buttons.add(name)
                form.fields.append((name, a.get("value", "")))
            elif (name, a.get("value", "")) not in form.fields + form.alternatives:
                form.alternatives.append((name, a.get("value", "")))
        elif kind == "select":
            self._select = (form, name, None)
        elif kind == "textarea":
            self._textarea, self._text = (form, name), ""
        else:
            form.fields.append((name, a.get("value", "")))

    def handle_data(self, data):
        if self._textarea is not None:
            self._text += data

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "form" and self._form is not None:
            self.forms.append(self._form)
            self._form = None
        elif tag == "select" and self._select is not None:
            form, name, chosen = self._select
            form.fields.append((name, chosen or ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            form, name = self._textarea
            form.fields.append((name, self._text))
            self._textarea = None

    def close(self):
        super().close()
        for form_id, tag, a in self._joining:
            if form_id in self._by_id:
                self._field(self._by_id[form_id], tag, a)


def parse_page(path: str, html: str) -> tuple[list[Form], list[str]]:
    parser = _PageParser(path)
    parser.feed(html)
    parser.close()
    return parser.forms, parser.links


def site_path(href: str) -> str | None:
    """The path and query of an address on this site, or None for another site, a
    fragment, a mail link."""
    parts = urlsplit(href)
    if parts.scheme not in ("", "http", "https") or (parts.netloc and parts.netloc != "testserver"):
        return None
    if not parts.path.startswith("/"):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def same_site_path(href: str) -> str | None:
    """The path and query of a link to this site, or None for another site, a fragment, a
    mail link, or a page the crawler must not visit."""
    path = site_path(href)
    return None if path is None or path.startswith(NOT_FOLLOWED) else path


def query_pairs(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)


def route_of(path: str) -> str:
    """The URL pattern a path resolves to (``review/candidates/<int:pk>/``), else the path."""
    try:
        return resolve(path).route
    except Resolver404:
        return path


def crawl(fetch, start: list[str], *, limit: int = 120, per_route: int = 4):
    """GET every page reachable from ``start``; returns (pages visited, forms found).
    ``fetch(url)`` answers (status, html; empty when the answer is not HTML). Of links to one
    URL pattern with the same query names, the first ``per_route`` paths are visited (the
    forms of one fact's page differ from another's); each form remembers the page it was
    found on (``page``)."""
    seen, queue, pages, forms = {}, list(start), [], {}
    while queue and len(pages) < limit:
        url = queue.pop(0)
        parts = urlsplit(url)
        key = (route_of(parts.path), tuple(sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True)})))
        paths = seen.setdefault(key, set())
        if parts.path in paths or len(paths) >= per_route:
            continue
        paths.add(parts.path)
        status, html = fetch(url)
        pages.append((url, status))
        if status != 200 or not html:
            continue
        page_forms, links = parse_page(parts.path, html)
        for form in page_forms:
            form.action = site_path(form.action) or parts.path
            form.page = url
            forms.setdefault(form.key, form)
        queue.extend(path for path in map(same_site_path, links) if path)
    return pages, list(forms.values())


# Rows that change on every request whatever its input: sessions (a visit refreshes them)
# and the login throttle's records.
VOLATILE_TABLES = ("django_session", "axes_")


def stored_state() -> dict[str, str]:
    """A digest of every table but the volatile ones: equal before and after, nothing changed."""
    return table_digests(skip=VOLATILE_TABLES)


# Context names under which the pages show a refusal they answer with 200 (the bulk bar's
# error, the verify page's missing file, a portal form's domain error).
ERROR_CONTEXT = ("error", "file_error")


def refused(response) -> bool:
    """The input was refused: a 4xx, a page that says so with an error message, or a page
    showing a form with errors."""
    if 400 <= response.status_code < 500:
        return True
    # Django's documented way to read a response's messages in a test.
    if any(message.level >= message_levels.ERROR for message in get_messages(response.wsgi_request)):
        return True
    contexts = response.context if isinstance(response.context, ContextList) else [response.context]
    for context in filter(None, contexts):
        for key, value in context.flatten().items():
            if key in ERROR_CONTEXT and value or isinstance(value, BaseForm) and value.is_bound and value.errors:
                return True
    return False
