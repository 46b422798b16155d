"""Technologies by name: databases and frameworks kept as data (``patterns/tech.py``) and
the programming languages Pygments ships lexers for.

Pygments' names are matched as written ("Go", "Julia", "Crystal" but not "go", "crystal"):
most are also English words or people's names, and they count only where a project is
said to use them. The curated names match in any case. A message is split into word
tokens once and looked up in dictionaries, longest name first (up to three words): a
few dictionary look-ups a word, however many names there are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pygments.lexers import get_all_lexers

from .patterns import tech

MAX_WORDS = 3
# A name starts with a letter, a digit or a dot (".NET") and may hold . + # - (C++, F#, Node.js).
_TOKEN = re.compile(r"[A-Za-z0-9.][A-Za-z0-9.+#_-]*")
_WRITTEN = re.compile(r"[A-Za-z0-9.][A-Za-z0-9.+#_-]*(?: [A-Za-z0-9.][A-Za-z0-9.+#_-]*)*")
# Lexers that are not a language a project is written in: sessions, logs, configuration
# and template dialects, and names that are ordinary words ("Text", "Email", "Red").
_NOT_LANGUAGES = re.compile(
    r"session|console|log|traceback|template|file|configuration|conf\b|data|dump|objdump|patch|catalog|"
    r"\+|/|\(|\)|\bin\b|\bwith\b|literate|markdown|text|html|css|json|yaml|xml|ini\b|diff|e-mail|properties",
    re.I,
)
_ORDINARY_WORDS = frozenset(
    "Arrow Boa Clay Clean Duel Earl Grey Email Factor Fancy Felix Fish Icon Io Ioke Jasmin Kal Logos Mask Monkey "
    "Monte Nit Opa Pan Pointless Pony Praat Red Ride Rita Ring Slash Snowball Spice Tea Turtle Zone Alloy Berry "
    "Blueprint Carbon Dylan Forth Golo Hy Igor Limbo Maple Mosel Myghty Pig Pike Q K J S D C BC Rd reg dg Silver "
    "Sophia Stan Tal Sieve Slim Velocity Lasso Janet Whiley Wren Tact Rell Sed Smithy Xorg Savi Shen Soong Sass "
    "Silver Srcinfo Termcap Terminfo Thrift Treetop Unicon Evoque Juttle Kuin Phix Croc Cirru Ezhil".split()
)


@dataclass(frozen=True)
class TechMention:
    start: int
    end: int
    name: str  # as stored
    field: str  # "database" or "tech_stack"


def _pygments_languages() -> dict[str, str]:
    names = {}
    for name, _aliases, filenames, _mimetypes in get_all_lexers(plugins=False):
        if not _WRITTEN.fullmatch(name):
            continue  # a name the tokens cannot spell ("Cap'n Proto") is never found
        if (not filenames or len(name) < 2 or name.islower() or name in _ORDINARY_WORDS or len(name.split()) > MAX_WORDS
                or _NOT_LANGUAGES.search(name)):
            continue
        names[name] = name
    return names


class TechVocabulary:
    def __init__(self):
        self.databases = {**tech.DATABASES, **tech.MORE_DATABASES}
        self.folded = {**tech.STACK, **tech.MORE_STACK, **self.databases}  # lower case → stored name
        self.exact = _pygments_languages()  # as written → stored name
        self.database_names = frozenset(self.databases.values())
        # The first word of every name of several words ("react" of "react native"), lower case.
        self.first_words = frozenset(
            name.split()[0].lower() for name in (*self.folded, *self.exact) if " " in name
        )

    def find(self, text: str) -> list[TechMention]:
        """Every technology named in ``text``, left to right, the longest name at each place."""
        tokens = [(match.start(), match.group(0).rstrip(".-")) for match in _TOKEN.finditer(text)]
        found, index, count = [], 0, len(tokens)
        while index < count:
            start, word = tokens[index]
            hit = None
            if word.lower() in self.first_words:  # a name of several words may start here
                for width in range(min(MAX_WORDS, count - index), 1, -1):
                    phrase = text[start : tokens[index + width - 1][0] + len(tokens[index + width - 1][1])]
                    name = self.exact.get(phrase) or self.folded.get(phrase.lower())
                    if name:
                        hit = (width, name, phrase)
                        break
            if hit is None:
                name = self.exact.get(word) or self.folded.get(word.lower())
                hit = (1, name, word) if name else None
            if hit is None:
                index += 1
                continue
            width, name, phrase = hit
            field = "database" if name in self.database_names else "tech_stack"
            found.append(TechMention(start, start + len(phrase), name, field))
            index += width
        return found

    def entries(self) -> list[tuple[str, str]]:
        """Every (name as written, name as stored) this vocabulary knows."""
        return sorted({**self.folded, **self.exact}.items())


VOCABULARY = TechVocabulary()
