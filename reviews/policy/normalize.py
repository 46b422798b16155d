"""Text normalisation and keyed digests, shared by resolution, duplicates and the audit."""
import hashlib
import hmac
import json
import re
import unicodedata

from django.conf import settings

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = "。.!！?？,，;；:：、"


def normalize_text(text: str) -> str:
    """NFKC, case-fold, trim and collapse whitespace (SPEC §1 resolution rule)."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return _WHITESPACE.sub(" ", folded).strip()


def normalize_value(value: str) -> str:
    """A fact value's comparison form: normalised text without trailing punctuation."""
    return normalize_text(value).rstrip(_TRAILING_PUNCTUATION).strip()


def digest_keys() -> list[bytes]:
    """The current digest key first, then the old ones a rotation kept (SPEC §6)."""
    return [key.encode() for key in (settings.MEMORY_DIGEST_KEY, *settings.MEMORY_DIGEST_OLD_KEYS) if key]


def _encoded(payload) -> bytes:
    if not isinstance(payload, str):
        payload = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return payload.encode()


def keyed_digest(payload) -> str:
    """HMAC-SHA256 of a JSON-serialisable payload under the current key; "" for None.

    Keyed, so a digest of a short value ("Berlin") cannot be reversed by guessing.
    """
    if payload is None or payload == "":
        return ""
    return hmac.new(digest_keys()[0], _encoded(payload), hashlib.sha256).hexdigest()


def keyed_digests(payload) -> frozenset[str]:
    """The payload's digest under every key still accepted (current and old)."""
    if payload is None or payload == "":
        return frozenset({""})
    encoded = _encoded(payload)
    return frozenset(hmac.new(key, encoded, hashlib.sha256).hexdigest() for key in digest_keys())


def digest_matches(payload, digest: str) -> bool:
    """Whether ``digest`` was made from ``payload`` under the current or an old key."""
    return digest in keyed_digests(payload)


def value_digest(value: str) -> str:
    return keyed_digest("v:" + normalize_value(value))


def value_digests(value: str) -> frozenset[str]:
    """A value's digest under every accepted key: what duplicate and suppression lookups match."""
    return keyed_digests("v:" + normalize_value(value))


_SLUG_DROP = re.compile(r"[^\w\u4e00-\u9fff-]+")


def slugify_entity_id(name: str) -> str:
    """A stable entity id from a display name; keeps CJK characters (小李 stays 小李)."""
    slug = _SLUG_DROP.sub("-", normalize_text(name)).strip("-_")
    return re.sub(r"-{2,}", "-", slug)[:120] or "entity"
