"""The labelled extraction set: what it covers, and the rule extractor's figures on it, pinned.

A change to the rules that lowers a figure fails here; a change that raises one should
raise the pin in the same commit (the README's table shows the same run).
"""
from pathlib import Path

import pytest

from reviews.extraction.evaluation import evaluate_extractor, load_dataset
from reviews.extraction.rules import RuleExtractor
from reviews.models import Kind, MemoryScope
from reviews.schema import DEFAULT_FIELDS

EVAL_DIR = Path(__file__).resolve().parents[2] / "reviews" / "fixtures" / "eval"

# (precision, recall, f1) at least; noise rate at most; leaks: none.
PINNED = {
    "extraction.jsonl": {"precision": 0.992, "recall": 0.918, "f1": 0.954, "noise_rate": 0.0},
    "extraction_heldout.jsonl": {"precision": 1.0, "recall": 0.966, "f1": 0.983, "noise_rate": 0.0},
}


def dataset(name):
    with open(EVAL_DIR / name, encoding="utf-8") as handle:
        return load_dataset(handle)


def test_the_set_covers_what_the_issue_asks():
    items = dataset("extraction.jsonl")
    expectations = [expected for item in items for expected in item.expect]

    assert len(items) >= 300
    chinese = sum(item.language == "zh" for item in items)
    assert 0.45 <= chinese / len(items) <= 0.55
    assert sum(not item.expect for item in items) >= len(items) / 3
    assert sum(len(item.messages) > 1 for item in items) >= 20
    assert sum(bool(item.secret) for item in items) >= 10
    named = {name for expected in expectations for name in expected.fields}
    assert {field for _, field, *_ in DEFAULT_FIELDS} <= named
    assert {"relation:works_on", "relation:works_at", "relation:pen_name"} <= named
    assert {expected.kind for expected in expectations} >= {Kind.FACT, Kind.PLAN, Kind.RELATION}
    assert {expected.scope for expected in expectations} == {MemoryScope.LONG_TERM, MemoryScope.THREAD}
    for group in ("other", "hyp", "q", "chat", "asst", "corr"):
        assert sum(f"-{group}-" in item.id for item in items) >= 6, group


def test_the_held_out_set_is_separate():
    tuned = {item.target[1] for item in dataset("extraction.jsonl")}
    held_out = dataset("extraction_heldout.jsonl")

    assert len(held_out) >= 40
    assert not tuned & {item.target[1] for item in held_out}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_rule_extractor_keeps_its_figures(name):
    figures = evaluate_extractor(RuleExtractor(), dataset(name)).as_dict()
    pinned = PINNED[name]

    assert figures["secret_leaks"] == 0
    assert figures["errors"] == 0
    for measure in ("precision", "recall", "f1"):
        assert figures[measure] >= pinned[measure], (measure, figures[measure])
    assert figures["noise_rate"] <= pinned["noise_rate"], figures["noise_rate"]
