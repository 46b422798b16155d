"""The credential corpus: every positive's secret disappears, every negative survives unchanged.

``tests/fixtures/secrets_corpus.jsonl`` holds one example a line: ``text`` and ``secrets``,
the substrings that must not survive masking (empty for a negative). ``bench/
secret_detectors.py`` reads the same file for precision, recall and speed.
"""
import json
from pathlib import Path

import pytest

from reviews.secrets import PLACEHOLDER, contains_secret, mask_secrets

CORPUS = [json.loads(line) for line in (Path(__file__).parents[1] / "fixtures" / "secrets_corpus.jsonl").open(encoding="utf-8")]
POSITIVES = [item for item in CORPUS if item["secrets"]]
NEGATIVES = [item for item in CORPUS if not item["secrets"]]


def test_the_corpus_is_big_enough_in_both_languages():
    for items in (POSITIVES, NEGATIVES):
        assert len(items) >= 150
        chinese = [item for item in items if any("\u4e00" <= c <= "\u9fff" for c in item["text"])]
        assert len(chinese) >= 30
    assert len({item["id"] for item in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("item", POSITIVES, ids=[item["id"] for item in POSITIVES])
def test_every_secret_is_masked(item):
    masked = mask_secrets(item["text"])
    assert masked.found and contains_secret(item["text"])
    for secret in item["secrets"]:
        assert secret not in masked.text
    assert any(PLACEHOLDER.format(kind=kind) in masked.text for kind in masked.kinds)


@pytest.mark.parametrize("item", NEGATIVES, ids=[item["id"] for item in NEGATIVES])
def test_ordinary_text_survives_unchanged(item):
    masked = mask_secrets(item["text"])
    assert masked.text == item["text"]
    assert not masked.found and not contains_secret(item["text"])
