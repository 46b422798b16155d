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


def _digest_key() -> bytes:
    return (getattr(settings, "MEMORY_DIGEST_KEY", "") or settings.SECRET_KEY).encode()


def keyed_digest(payload) -> str:
    """HMAC-SHA256 of a JSON-serialisable payload; "" for None.

    Keyed, so a digest of a short value ("Berlin") cannot be reversed by guessing.
    """
    if payload is None or payload == "":
        return ""
    if not isinstance(payload, str):
        payload = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hmac.new(_digest_key(), payload.encode(), hashlib.sha256).hexdigest()


def value_digest(value: str) -> str:
    return keyed_digest("v:" + normalize_value(value))


_SLUG_DROP = re.compile(r"[^\w\u4e00-\u9fff-]+")


def slugify_entity_id(name: str) -> str:
    """A stable entity id from a display name; keeps CJK characters (小李 stays 小李)."""
    slug = _SLUG_DROP.sub("-", normalize_text(name)).strip("-_")
    return re.sub(r"-{2,}", "-", slug)[:120] or "entity"
