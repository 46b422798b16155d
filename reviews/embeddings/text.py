"""What an embedding is made of: a fact's field label, its value and its entity's name.

The label is written in the language the fact was stated in (a Chinese value reads with
the Chinese label), so the text embedded is one the subject could have said; the label
carries the meaning the bare value lacks ("Database: MySQL 8", not "MySQL 8").
"""
from __future__ import annotations

import re

from django.utils import translation

from ..labels import DEFAULT_FIELD_LABELS, humanise

_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


class Lang:
    """A text's language as the eval reports it (query language → fact language)."""

    EN = "en"
    ZH = "zh"
    MIXED = "mixed"


def text_language(text: str) -> str:
    has_cjk = bool(_CJK.search(text))
    if not has_cjk:
        return Lang.EN
    # Product names ("PostgreSQL", "Flask") inside a Chinese sentence keep it Chinese;
    # a sentence that is half English words is mixed.
    latin = _LATIN_WORD.findall(text)
    cjk_chars = len(_CJK.findall(text))
    return Lang.MIXED if latin and sum(map(len, latin)) > cjk_chars else Lang.ZH


def field_label(entity_type: str, field: str, language: str) -> str:
    label = DEFAULT_FIELD_LABELS.get((entity_type, field))
    if label is None:
        return humanise(field.split(":", 1)[-1])
    with translation.override("zh-hans" if language == Lang.ZH else "en"):
        return str(label)


def fact_text(*, entity_type: str, field: str, value: str, entity_name: str = "") -> str:
    """``"Database: MySQL 8 (Flask Migration)"``: the one text embedded for a fact."""
    language = Lang.ZH if _CJK.search(value) else Lang.EN
    text = f"{field_label(entity_type, field, language)}: {value}"
    if entity_name and entity_type != "user":
        text += f" ({entity_name})"
    return text
