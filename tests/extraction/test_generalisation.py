"""The generalisation set: written before any tuning, split once, the test half untouched.

The rule extractor is tuned on ``generalisation-dev.jsonl`` only; ``generalisation-test.jsonl``
is what its figures are reported on. The digest below pins which items are in the test half:
regenerating the set with another seed, or moving items between the halves, fails here.
"""
import hashlib
import importlib.util
from pathlib import Path

from reviews.extraction.evaluation import evaluate_extractor, load_dataset
from reviews.extraction.rules import RuleExtractor

ROOT = Path(__file__).resolve().parents[2]
EVAL_DIR = ROOT / "reviews" / "fixtures" / "eval"
TEST_IDS_SHA256 = "c9e54dd8a387515bb566e74ec3f39573d1d7d40065e0ace1134b2f6b31f5d4f7"


def half(name):
    with open(EVAL_DIR / f"generalisation-{name}.jsonl", encoding="utf-8") as handle:
        return load_dataset(handle)


def generator():
    spec = importlib.util.spec_from_file_location("generalisation", EVAL_DIR / "generalisation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_test_half_is_the_pinned_one():
    ids = sorted(item.id for item in half("test"))

    assert hashlib.sha256("\n".join(ids).encode()).hexdigest() == TEST_IDS_SHA256


def test_the_committed_files_are_what_the_script_writes():
    module = generator()
    halves = module.build()

    for name, path in module.OUTPUTS.items():
        assert path.read_text(encoding="utf-8") == module.render(halves[name]), name


def test_the_halves_are_disjoint_and_even():
    dev, test = half("dev"), half("test")

    assert not {item.id for item in dev} & {item.id for item in test}
    assert not {item.target[1] for item in dev} & {item.target[1] for item in test}
    assert abs(len(dev) - len(test)) <= 1


def test_the_set_covers_what_the_issue_asks():
    items = half("dev") + half("test")
    old = {item.target[1] for item in load_dataset(open(EVAL_DIR / "extraction.jsonl", encoding="utf-8"))}

    assert len(items) >= 600
    assert sum(not item.expect for item in items) >= 0.25 * len(items)
    assert not old & {item.target[1] for item in items}
    assert {item.language for item in items} == {"en", "zh", "mixed"}
    for language in ("en", "zh", "mixed"):
        assert sum(item.language == language for item in items) >= 60, language
    for group in ("question", "hypothetical", "other", "quote", "joke", "secret"):
        assert sum(f"-{group}-" in item.id and not item.expect for item in items) >= 12, group
    assert sum(bool(item.secret) for item in items) >= 16


def test_the_rule_extractor_on_the_test_half_meets_the_targets_in_each_language():
    figures = evaluate_extractor(RuleExtractor(), half("test")).as_dict()

    for language in ("en", "zh", "mixed"):
        tally = figures["by_language"][language]
        assert tally["recall"] >= 0.85 and tally["precision"] >= 0.95, (language, tally)
    assert figures["noise_rate"] <= 0.05
    assert figures["secret_leaks"] == 0
    assert figures["ungrounded"] == 0  # every evidence is a span of the message that supports the value
