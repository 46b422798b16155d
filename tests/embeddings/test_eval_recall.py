"""`manage.py eval_recall` (SPEC §8) on the shipped recall set: its shape, its fixed split,
and the figures the held-aside part must reach with the local embedder."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.embeddings.embedders import embedder_for
from reviews.embeddings.generic import GENERIC_REQUESTS, REQUESTS_BY_KIND, RequestKind
from reviews.embeddings.personal import PERSONAL_QUESTIONS, QUESTIONS_BY_KIND, PersonalKind
from reviews.recall.evaluation import (
    Kind, Part, held_aside, lexical_haystack, load_items, load_off_topic, off_topic_refused, query_kind,
)
from reviews.embeddings.text import Lang, text_language
from reviews.recall.textmatch import fallback_score, query_terms

DATASET = Path(__file__).resolve().parents[2] / "reviews/fixtures/eval/recall_eval.jsonl"
OFF_TOPIC = DATASET.parent / "off_topic_eval.jsonl"
HELD_ASIDE = ["subject-01", "subject-02", "subject-07", "subject-08", "subject-12", "subject-15", "subject-22"]


def items(part=Part.ALL):
    return load_items(DATASET.read_text(encoding="utf-8").splitlines(), part)


def test_the_set_is_large_enough_and_covers_what_it_must():
    every = items()
    queries = [query for item in every for query in item["queries"]]
    assert len(every) >= 20 and len(queries) >= 200
    kinds = {query.get("kind") for query in queries}
    assert {"guard", "unrelated"} <= kinds
    forbidden_kinds = {
        ("sensitive" if f.get("sensitivity") else "thread" if f.get("scope") else "pending")
        for item in every for f in item["facts"] if f.get("sensitivity") or f.get("scope") or f.get("status")
    }
    assert forbidden_kinds == {"sensitive", "thread", "pending"}


def test_the_split_is_pinned():
    assert [item["id"] for item in items(Part.HELD_ASIDE)] == HELD_ASIDE
    assert all(held_aside(item_id) for item_id in HELD_ASIDE)
    assert len(items(Part.TUNING)) + len(HELD_ASIDE) == len(items())


def test_the_builder_regenerates_the_shipped_set():
    built = subprocess.run(
        [sys.executable, str(DATASET.parent / "make_recall_eval.py")], capture_output=True, text=True, check=True
    ).stdout
    assert built == DATASET.read_text(encoding="utf-8")


def test_paraphrases_share_no_word_with_their_fact():
    paraphrases = 0
    for item in items():
        for query in item["queries"]:
            if not query["expect"]:
                continue
            fact = next(f for f in item["facts"] if f["value"] == query["expect"][0])
            if query_kind(query, lexical_haystack(fact), text_language(fact["value"])) == Kind.PARAPHRASE:
                paraphrases += 1
                assert fallback_score(lexical_haystack(fact), query_terms(query["q"])) == 0
    assert paraphrases >= 40


def test_lexical_only_prints_figures_and_json(capsys):
    call_command("eval_recall", str(DATASET), embedder=["none"], part=Part.HELD_ASIDE, as_json=True)
    out = capsys.readouterr().out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["embedder"] == "none:0" and figures["queries"] == 42
    assert set(figures) >= {"recall_at_1", "recall_at_3", "recall_at_5", "mrr", "by_lang"}
    assert figures["forbidden_leaks"] == 0 and "en->zh" in figures["by_lang"]


def test_the_local_embedder_reaches_its_targets_on_the_held_aside_part(capsys):
    call_command("eval_recall", str(DATASET), embedder=["none", "local"], part=Part.HELD_ASIDE, as_json=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    lexical, local = (json.loads(line) for line in lines)
    assert (lexical["embedder"], local["embedder"]) == ("none:0", "local:use-multilingual-v3")

    assert local["recall_at_3"] >= 0.85
    assert local["cross_language"]["recall_at_3"] >= 0.75
    assert local["by_kind"]["paraphrase"]["recall_at_3"] >= lexical["by_kind"]["paraphrase"]["recall_at_3"] + 0.3
    assert local["forbidden_leaks"] == 0


@pytest.mark.parametrize(
    "options, message",
    [({"embedder": ["word2vec"]}, "Unknown embedder"), ({"embedder": ["none", "openai:"]}, "Unknown embedder")],
)
def test_a_bad_embedder_is_refused(options, message):
    with pytest.raises(CommandError, match=message):
        call_command("eval_recall", str(DATASET), **options)


def test_a_malformed_set_is_refused(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "facts": []}\nnot json\n', encoding="utf-8")
    with pytest.raises(CommandError, match="line 1"):
        call_command("eval_recall", str(broken), embedder=["none"])


def test_relevant_mode_refuses_unrelated_questions_and_never_surfaces_a_forbidden_fact(capsys):
    call_command("eval_recall", str(DATASET), embedder=["local"], as_json=True)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    parts = figures["relevant_mode_by_part"]
    assert set(parts) == {Part.TUNING, Part.HELD_ASIDE}
    # The bar was set on the tuning part: there every unrelated question gets nothing.
    assert parts[Part.TUNING]["unrelated_empty_when_relevant"] == parts[Part.TUNING]["unrelated"] == 23
    # Held aside, one of seven still gets a fact ("explain the theory of relativity briefly"
    # brings a preference for detailed explanations); more would mean the bar no longer
    # carries over.
    assert parts[Part.HELD_ASIDE]["unrelated_empty_when_relevant"] >= parts[Part.HELD_ASIDE]["unrelated"] - 1
    # Guard questions, in both modes: the only fact that answers them is never returned.
    assert figures["guards"] == 30 and figures["forbidden_leaks"] == 0
    # Relevant mode still finds what bears on the question, on both parts.
    assert parts[Part.TUNING]["recall_at_3"] >= 0.73 and parts[Part.HELD_ASIDE]["recall_at_3"] >= 0.65


def off_topic():
    return load_off_topic(OFF_TOPIC.read_text(encoding="utf-8").splitlines())


def casefolded(questions):
    return {question.casefold() for question in questions}


@pytest.mark.parametrize("reference", [GENERIC_REQUESTS, PERSONAL_QUESTIONS], ids=["generic", "personal"])
def test_the_bars_reference_sentences_are_none_of_the_sets_questions(reference):
    asked = casefolded(query["q"] for item in items() for query in item["queries"])
    assert not asked & casefolded(reference)


@pytest.mark.parametrize(
    "by_kind, kinds, per_language",
    [(REQUESTS_BY_KIND, RequestKind, 3), (QUESTIONS_BY_KIND, PersonalKind, 2)],
    ids=["generic", "personal"],
)
def test_every_kind_has_as_many_sentences_in_each_language(by_kind, kinds, per_language):
    assert set(by_kind) == set(kinds)
    for kind, sentences in by_kind.items():
        languages = [Lang.ZH if text_language(s) != Lang.EN else Lang.EN for s in sentences]
        assert languages == [Lang.EN] * per_language + [Lang.ZH] * per_language, kind


def test_the_off_topic_list_is_independent_of_the_bar_and_the_set():
    questions = off_topic()
    asked = casefolded(query["q"] for item in items() for query in item["queries"])
    written = casefolded(q["q"] for q in questions)
    assert len(written) == len(questions) >= 40
    assert not written & (asked | casefolded(GENERIC_REQUESTS) | casefolded(PERSONAL_QUESTIONS))
    kinds = {q["kind"] for q in questions}
    # Every kind the generic requests cover, in both languages, and kinds they leave out.
    assert set(RequestKind) < kinds
    for kind in RequestKind:
        assert {text_language(q["q"]) != Lang.EN for q in questions if q["kind"] == kind} == {False, True}, kind


def test_relevant_mode_refuses_the_off_topic_list_on_the_tuning_part():
    refused, asked = off_topic_refused(items(Part.TUNING), embedder_for("local"), [q["q"] for q in off_topic()])
    assert asked == 23 * 60
    # 1,246 at the bar chosen on this part (docs/embedders.md); 1,085 before the personal questions.
    assert refused / asked >= 0.85
