"""What the page fuzzer needs: hostile values, a crawler that finds every form and link a
persona can reach, and a state digest to prove a refused input changed nothing."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qsl, quote_plus, urlsplit

from django.contrib.messages import constants as message_levels
from django.db import connection

# Each alone in one field, then all fields at once. Strings are sent as UTF-8 with lone
# surrogates passed through as their (invalid) bytes.
HOSTILE = {
    "nul": "a\x00b",
    "lone surrogate": "\ud800",
    "invalid utf-8": b"\xff\xfe",
    "10k characters": "x" * 10_000,
    "path traversal": "../../../etc/passwd",
    "script": '<script>alert(1)</script>"\'>',
    "sql": "' OR '1'='1'; DROP TABLE reviews_fact; --",
    "right-to-left override": "\u202egnp.exe",
    "huge number": "9" * 40,
    "negative": "-1",
    "float overflow": "1e309",
    "not a number": "NaN",
    "chinese": "张三/项目",
    "control characters": "\x01\x1b[31m\r\n",
    "empty": "",
}
ARRAY = "array (the field repeated)"

# Pages whose visit has an effect the fuzzer must not trigger by following a link.
NOT_FOLLOWED = ("/logout/", "/me/sign-out/", "/i18n/", "/admin/", "/static/", "/api/", "/compat/")


def encode_value(value: str | bytes) -> str:
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return quote_plus(raw)


def form_body(pairs: list[tuple[str, str | bytes]]) -> bytes:
    return "&".join(f"{encode_value(name)}={encode_value(value)}" for name, value in pairs).encode()


@dataclass
class Form:
    action: str  # a path
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def key(self):
        return (self.method, self.action, tuple(sorted({name for name, _ in self.fields})))

    def names(self) -> list[str]:
        return list(dict.fromkeys(name for name, _ in self.fields))


class _PageParser(HTMLParser):
    def __init__(self, page_path: str):
        super().__init__(convert_charrefs=True)
        self.page_path = page_path
        self.forms: list[Form] = []
        self.links: list[str] = []
        self._form: Form | None = None
        self._select: str | None = None
        self._select_value: str | None = None
        self._textarea: str | None = None
        self._text = ""
        self._buttons: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "option" and self._select is not None:
            if self._select_value is None or "selected" in a:
                self._select_value = a.get("value", "")
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "form":
            self._form = Form(action=a.get("action") or self.page_path, method=(a.get("method") or "get").upper())
            self._buttons = set()
        elif self._form is None or not a.get("name"):
            return
        elif tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "file":
                self._form.files.append(a["name"])
            elif kind in ("checkbox", "radio"):
                if "checked" in a or not any(n == a["name"] for n, _ in self._form.fields):
                    self._form.fields = [(n, v) for n, v in self._form.fields if n != a["name"] or kind == "checkbox"]
                    self._form.fields.append((a["name"], a.get("value", "on")))
            elif kind in ("submit", "button", "image", "reset"):
                if a["name"] not in self._buttons:
                    self._buttons.add(a["name"])
                    self._form.fields.append((a["name"], a.get("value", "")))
            else:
                self._form.fields.append((a["name"], a.get("value", "")))
        elif tag == "button":
            if a["name"] not in self._buttons:
                self._buttons.add(a["name"])
                self._form.fields.append((a["name"], a.get("value", "")))
        elif tag == "select":
            self._select, self._select_value = a["name"], None
        elif tag == "textarea":
            self._textarea, self._text = a["name"], ""

    def handle_data(self, data):
        if self._textarea is not None:
            self._text += data

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "form" and self._form is not None:
            self.forms.append(self._form)
            self._form = None
        elif tag == "select" and self._select is not None and self._form is not None:
            self._form.fields.append((self._select, self._select_value or ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None and self._form is not None:
            self._form.fields.append((self._textarea, self._text))
            self._textarea = None

def parse_page(path: str, html: str) -> tuple[list[Form], list[str]]:
    parser = _PageParser(path)
    parser.feed(html)
    return parser.forms, parser.links


def same_site_path(href: str) -> str | None:
    """The path and query of a link to this site, or None for another site, a fragment, a
    mail link, or a page the crawler must not visit."""
    parts = urlsplit(href)
    if parts.scheme not in ("", "http", "https") or (parts.netloc and parts.netloc != "testserver"):
        return None
    if not parts.path.startswith("/") or parts.path.startswith(NOT_FOLLOWED):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def query_pairs(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query, keep_blank_values=True)


def crawl(client, start: list[str], *, limit: int = 120):
    """GET every page reachable from ``start``; returns (pages visited, forms found). Links
    that differ only in their query values count once."""
    seen, queue, pages, forms = set(), list(start), [], {}
    while queue and len(pages) < limit:
        url = queue.pop(0)
        parts = urlsplit(url)
        key = (parts.path, tuple(sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True)})))
        if key in seen:
            continue
        seen.add(key)
        response = client.get(url)
        pages.append((url, response.status_code))
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        page_forms, links = parse_page(parts.path, response.content.decode())
        for form in page_forms:
            form.action = same_site_path(form.action) or parts.path
            forms.setdefault(form.key, form)
        queue.extend(path for path in map(same_site_path, links) if path)
    return pages, list(forms.values())


# Rows that change on every request whatever its input: sessions (a visit refreshes them)
# and the login throttle's records.
VOLATILE_TABLES = ("django_session", "axes_")


def stored_state() -> str:
    chunks = []
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            if table.startswith(VOLATILE_TABLES):
                continue
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY 1")
            chunks.append(f"== {table}\n" + "\n".join(repr(row) for row in cursor.fetchall()))
    return "\n".join(chunks)


def refused(response) -> bool:
    """The input was refused: a 4xx, or a page that says so with an error message."""
    if 400 <= response.status_code < 500:
        return True
    storage = getattr(response.wsgi_request, "_messages", None)
    queued = getattr(storage, "_queued_messages", [])
    return any(message.level >= message_levels.ERROR for message in queued)
