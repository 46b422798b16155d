"""Mixed-script look-alikes (Unicode TR39 confusables), for the ``confusable`` flag.

"Gооgle" with two Cyrillic ``о`` reads as Google to a person and is another string to
every search, comparison and agent. A word is confusable when it mixes scripts *and*
one of its characters is, per the Unicode Consortium's confusables table, a look-alike of
a character of another script in it. Words of one script ("Москва", "北京") and mixes
that deceive nobody (Japanese kana with kanji, "COVID-19", "iPhone 15") are left alone.

The table and the script data come from ``confusable_homoglyphs``, which ships
confusables.txt and Scripts.txt of the Unicode Character Database in its wheel: pure
Python (ICU's spoof checker needs a compiled PyICU), and kept up with Unicode releases.
"""
from __future__ import annotations

import re

from confusable_homoglyphs import categories, confusables

_WORD = re.compile(r"\w+", re.UNICODE)
_ASCII = re.compile(r"[\x00-\x7f]*")
# Scripts that mix in ordinary writing and imitate no alphabet: digits and punctuation,
# and the CJK scripts, which Japanese and Chinese mix with each other and with Latin.
_MIXING_FREELY = frozenset({"COMMON", "INHERITED", "HAN", "HIRAGANA", "KATAKANA", "HANGUL"})


def confusable_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that mix scripts into a look-alike, in the order found."""
    if not text or _ASCII.fullmatch(text):
        return ()
    found = []
    for word in _WORD.findall(text):
        if len(word) < 2 or _ASCII.fullmatch(word) or word in found:
            continue
        scripts = {categories.alias(character) for character in word} - _MIXING_FREELY
        if len(scripts) >= 2 and confusables.is_dangerous(word):
            found.append(word)
    return tuple(found)
