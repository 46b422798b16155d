"""Chinese word segmentation with jieba, set up once per process.

jieba ships its dictionary inside the package (``jieba/dict.txt``) and caches the prefix
dictionary it builds in the temporary directory: nothing is fetched. Building it costs
about a second, so :func:`words` does it on first use, once, under a lock (the web
process that never sees a Chinese message never pays). Words are cut without the hidden
Markov model: an unknown name comes out as single characters, which the reader joins back
up; with it, the cut is three times slower and merges a name with the verb after it.
"""
from __future__ import annotations

import logging
import threading

import jieba

jieba.setLogLevel(logging.WARNING)  # it logs every dictionary load at INFO

_lock = threading.Lock()
_tokenizer: jieba.Tokenizer | None = None


def tokenizer() -> jieba.Tokenizer:
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                built = jieba.Tokenizer()
                built.initialize()
                _tokenizer = built
    return _tokenizer


def words(text: str) -> list[tuple[int, str]]:
    """The words of ``text`` with their offsets, spaces dropped."""
    found, offset = [], 0
    for word in tokenizer().lcut(text, HMM=False):
        if word.strip():
            found.append((offset, word))
        offset += len(word)
    return found


_tags: dict[str, str] | None = None


def dictionary_tag(word: str) -> str:
    """The part of speech jieba's dictionary gives ``word`` ("n", "nr", …), or "" if it has none.

    Read from the dictionary file once, on first use (about a second): only a sentence
    that may give a name ("我是…") asks.
    """
    global _tags
    if _tags is None:
        with _lock:
            if _tags is None:
                tags = {}
                with jieba.get_dict_file() as handle:
                    for line in handle:
                        parts = line.decode("utf-8").split()
                        if len(parts) == 3:
                            tags[parts[0]] = parts[2]
                _tags = tags
    return _tags.get(word, "")
