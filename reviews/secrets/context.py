"""Credentials recognised by their context, not by a list of names (issue 39): a label
holding a credential word, then a value that is neither an ordinary word nor an everyday
number; "Bearer …" and "Basic …" whatever the token's shape; a passphrase of plain words
after a password label.

The decision is one small score a reviewer can follow (:func:`score_assignment`):

- the **label** counts when one of its words contains a credential word, in any case,
  position or language (``KEY``, ``OPENAI_KEY``, ``access_key_id``, ``AUTH``,
  ``sessionCookie``, ``数据库密码``, ``钥匙``) — unless a word of it says the value is
  *about* a credential (``max_tokens``, ``session_timeout``, ``password_min_length``,
  ``token_type``), or it is an ordinary word that merely contains one (``keyboard``,
  ``monkey``, ``passenger``, ``author``);
- the **value** counts against it when it is a placeholder or code (``None``,
  ``${TOKEN}``, ``user.password``), an everyday number (``512``, ``0.95``, ``3.11.7``), an
  ordinary word (``strict``, ``redis``, ``internationalization``) or shorter than six
  characters; anything else — letters with digits, symbols, mixed case — counts for it.

A label that counts and a value that counts: a credential, masked whole. Runs after the
shape and name passes of :func:`reviews.secrets.mask_secrets`, on what they left.
"""
from __future__ import annotations

import re

from .assignments import _ABOUT_WORDS, _CODE_SEPARATOR, _PLACEHOLDER, _PROSE_SEPARATOR, _is_code
from .found import Found

# Credential words, found anywhere in a label (lower-cased).
_STEM = re.compile(
    r"key|token|secret|pass|pwd|auth|credential|cookie|session|private|jwt|bearer"
    r"|密码|密碼|口令|密钥|秘钥|私钥|钥匙|令牌|凭证|凭据|验证码"
)
_PASSWORD_STEMS = ("pass", "pwd", "密码", "密碼", "口令")
# Ordinary words that hold a credential word: the label is the word, not a credential.
_ORDINARY_HOLDERS = frozenset(
    "monkey donkey turkey hockey jockey whiskey keyboard keyboards keynote keyword keywords keystone keystroke "
    "keystrokes keychain passenger passengers passage passages passport passports compass bypass surpass "
    "author authors authority authored privateer sessions".split()
)
# Words of a label that make it about a credential rather than one; ids stay credentials
# (``access_key_id``, ``session_id``).
_ABOUT = (_ABOUT_WORDS - {"id", "ids"}) | frozenset("rate ratio percent score hint question method mode".split())
_WORD_SPLIT = re.compile(r"[_.\-$ ]+|(?<=[a-z0-9])(?=[A-Z])")
_CJK_SEPARATOR = re.compile(r"[^\S\n]*(?:也|还|现在|就)?(?:是|为|為|改成|改为|换成|设为)?[^\S\n]*[:：=]?[^\S\n]*")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|“([^”\n]{1,200})”")
_BARE = re.compile(r"[!#-&(-+\--9<-_a-~]+")  # printable ASCII but quotes, comma, colon, semicolon, space
_NUMBER = re.compile(r"[+-]?(?:\d{1,6}(?:[.,]\d+)*|\d*\.\d+)%?|v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?")
_WORD = re.compile(r"[A-Za-z][a-z]*(?:-[a-z]+)*|[A-Z]+")
_PASSPHRASE = re.compile(r"[A-Za-z]{2,}(?:[ ][A-Za-z]{2,}){2,7}(?=[ ]*(?:$|[\n.;,!?)]))")
_FUNCTION_WORDS = frozenset(
    "the a an to for of in on at by with from and or but not no is are was be see use it this that my your our "
    "their his her its as if then than via per please must should can will do does stored kept saved same "
    "required needed optional".split()
)
_BRIDGE = re.compile(r"(?:[ _-][A-Za-z]{2,12}){1,2}(?=[ :=])")
_BEARER = re.compile(r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)")

LABEL_COUNTS = 1.0
VALUE_GENERATED = 1.0
VALUE_ORDINARY = -1.0


def _label_counts(label: str) -> bool:
    lowered = label.lower()
    if not _STEM.search(lowered):
        return False
    words = [w.lower() for w in _WORD_SPLIT.split(label.strip("-$.")) if w]
    if any(word in _ABOUT for word in words):
        return False
    return any(_STEM.search(word) and word not in _ORDINARY_HOLDERS for word in words) or not label.isascii()


def score_value(value: str) -> float:
    """How much ``value`` looks like a credential rather than a setting (see the docstring)."""
    if not value or _PLACEHOLDER.fullmatch(value) or _is_code(value):
        return VALUE_ORDINARY
    if _NUMBER.fullmatch(value) or _WORD.fullmatch(value) or len(value) < 6:
        return VALUE_ORDINARY
    # A template's reference ("${{ secrets.X }}", "{{ token }}") or words: not a literal
    # (a passphrase of plain words is read before this, after a password label).
    if " " in value or any(mark in value for mark in ("{{", "${", "%(", "<%")):
        return VALUE_ORDINARY
    return VALUE_GENERATED


def score_assignment(label: str, value: str) -> float:
    """The score of "label = value": a credential at 2 (a label that counts, a value that does)."""
    return (LABEL_COUNTS if _label_counts(label) else 0.0) + score_value(value)


def _kind(label: str) -> str:
    lowered = label.lower()
    if any(stem in lowered for stem in _PASSWORD_STEMS):
        return "password"
    if "key" in lowered or "密钥" in label or "秘钥" in label or "私钥" in label:
        return "api_key"
    return "token"


def find_in_context(text: str) -> list[Found]:
    lowered = text.lower()
    if not _STEM.search(lowered):
        return []
    found = [Found(m.start(1), m.end(1), "token") for m in _BEARER.finditer(text) if not _WORD.fullmatch(m.group(1))]
    taken = found[-1].end if found else 0
    for stem in _STEM.finditer(lowered):
        if stem.start() < taken:
            continue
        start, end = _widen(text, stem.start(), stem.end())
        taken = end
        name = text[start:end]
        spot = _value_after(text, name, end)
        if spot is not None:
            found.append(Found(spot[0], spot[1], _kind(name)))
            taken = spot[1]
    return found


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")


def _is_cjk(character: str) -> bool:
    return "\u3400" <= character <= "\u9fff"


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole label around a credential word: the name it is part of (``OPENAI_KEY``,
    ``accessToken``), or up to four Chinese characters before a Chinese one (``数据库密码``,
    ``API密钥``); a Chinese label ends with its credential word (``钥匙是…``)."""
    cjk = _is_cjk(text[start])
    limit = max(0, start - 48)
    if cjk:
        count = 0
        while start > limit and _is_cjk(text[start - 1]) and count < 4:
            start, count = start - 1, count + 1
        while start > limit and text[start - 1] in _NAME_CHARS:
            start -= 1
        return start, end
    while start > limit and text[start - 1] in _NAME_CHARS:
        start -= 1
    while end < len(text) and text[end] in _NAME_CHARS:
        end += 1
    while end > start and text[end - 1] in ".-":
        end -= 1
    return start, end


def _value_after(text: str, label: str, pos: int) -> tuple[int, int] | None:
    if text.startswith("[redacted", pos):
        return None
    if pos < len(text) and text[pos] in "\"'`" and pos > len(label) and text[pos - len(label) - 1] == text[pos]:
        pos += 1  # "label": value
    separator = _CODE_SEPARATOR.match(text, pos) or _PROSE_SEPARATOR.match(text, pos)
    bridge = _BRIDGE.match(text, pos) if separator is None else None
    if bridge and not {w.lower() for w in bridge.group(0).split()} & (_ABOUT | _FUNCTION_WORDS):
        # "the access key id is …": a word or two of the label after the credential word.
        label, pos = label + bridge.group(0), bridge.end()
        separator = _CODE_SEPARATOR.match(text, pos) or _PROSE_SEPARATOR.match(text, pos)
    if separator is None or separator.end() == pos:
        separator = _CJK_SEPARATOR.match(text, pos) if not label[-1].isascii() else None
        if separator is None or separator.end() == pos:
            return None
    start = separator.end()
    if text.startswith("[redacted", start):
        return None
    if any(stem in label.lower() for stem in _PASSWORD_STEMS) or "passphrase" in label.lower():
        phrase = _PASSPHRASE.match(text, start)
        if phrase and not {w.lower() for w in phrase.group(0).split()} & _FUNCTION_WORDS:
            return phrase.span()
    quoted = _QUOTED.match(text, start)
    if quoted:
        group = next(i for i in range(1, 5) if quoted.group(i) is not None)
        value, span = quoted.group(group), quoted.span(group)
    else:
        bare = _BARE.match(text, start)
        if not bare:
            return None
        value = bare.group(0).rstrip(".;:?!)]}")
        span = (start, start + len(value))
    return span if score_assignment(label, value.strip()) >= LABEL_COUNTS + VALUE_GENERATED else None
