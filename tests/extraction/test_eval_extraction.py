"""manage.py eval_extraction: scores an extractor on a labelled set, writes nothing (SPEC §8)."""
import json

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.extraction.evaluation import EvalItem, item_context, load_dataset, score_item
from reviews.domain import CandidateInput
from tests.extraction.fake_openai import fact, facts, message_of
from tests.ingest.helpers import ingest, message

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "zh-1", "text": "我叫王芳。", "expect": [{"field": "name", "value": "王芳"}]},
    {"id": "en-1", "text": "I live in Berlin.", "expect": [{"field": "location", "value": "berlin"}]},
    {"id": "en-2", "messages": [
        {"role": "user", "content": "I work on the billing service."},
        {"role": "assistant", "content": "What is it built with?"},
        {"role": "user", "content": "It uses Django."},
    ], "expect": [{"fields": ["tech_stack"], "value": "Django"}]},
    {"id": "en-3", "text": "Just for this answer, keep it short.",
     "expect": [{"field": "preference", "value": "short", "scope": "thread"}]},
    {"id": "quiet-1", "text": "What is the capital of France?", "expect": []},
    {"id": "quiet-2", "text": "My friend uses Java.", "expect": []},
    {"id": "secret-1", "text": "My password is hunter2.", "expect": [], "secret": "hunter2"},
]


def write(tmp_path, items, name="set.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    return str(path)


def row_counts():
    return {model._meta.label: model.objects.count() for model in apps.get_app_config("reviews").get_models()}


def run(*args):
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command("eval_extraction", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_rule_extractor_is_scored_and_nothing_is_written(tenant, tmp_path):
    ingest(tenant, message("m-0", "我叫 Alice。"))  # something in the database to stay as it is
    before = row_counts()

    out, err = run(write(tmp_path, ITEMS), "--extractor", "rules", "--json")

    assert row_counts() == before
    figures = json.loads(out.strip().splitlines()[-1])
    assert (figures["items"], figures["expected"], figures["tp"], figures["fp"]) == (7, 4, 4, 0)
    assert (figures["precision"], figures["recall"], figures["f1"]) == (1.0, 1.0, 1.0)
    assert (figures["noise_rate"], figures["secret_leaks"], figures["quiet_items"]) == (0.0, 0, 3)
    assert figures["by_language"]["zh"]["tp"] == 1 and figures["by_language"]["en"]["tp"] == 3
    assert figures["by_scope"]["thread"] == {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert set(figures["by_field"]) == {"name", "location", "tech_stack", "preference"}
    assert figures["by_kind"]["fact"]["tp"] == 4
    assert "precision 1.000  recall 1.000" in out
    assert "7/7" in err  # the progress bar reached the end


def test_misses_and_extras_count_against_recall_and_precision(tmp_path):
    items = [
        {"id": "a", "text": "I live in Berlin.", "expect": [{"field": "location", "value": "Paris"}]},
        # A plan proposed as a fact is not what was expected.
        {"id": "b", "text": "We might move the billing service to Kubernetes.",
         "expect": [{"field": "tech_stack", "value": "Kubernetes", "kind": "fact"}]},
        {"id": "c", "text": "Hello there, I'm Bob.", "expect": []},
    ]
    figures = json.loads(run(write(tmp_path, items), "--extractor", "rules", "--json")[0].splitlines()[-1])

    assert (figures["tp"], figures["fp"], figures["fn"]) == (0, 3, 2)
    assert (figures["precision"], figures["recall"]) == (0.0, 0.0)
    assert (figures["noise_rate"], figures["noise_items"], figures["noise_candidates"]) == (1.0, 1, 1)
    assert figures["by_kind"]["plan"]["fp"] == 1 and figures["by_kind"]["fact"]["fn"] == 2


def test_the_llm_extractor_is_scored_through_the_real_client(tmp_path, llm_settings, fake_llm):
    answers = {
        "我叫王芳。": facts(fact("name", "王芳", "我叫王芳")),
        "I live in Berlin.": facts(fact("location", "Berlin", "I live in Berlin")),
        "It uses Django.": facts(fact("tech_stack", "Django", "It uses Django", entity_type="project",
                                      entity_id="billing")),
        # Evidence the message does not contain: dropped before it becomes a candidate.
        "Just for this answer, keep it short.": facts(fact("preference", "keep it short", "keep it brief",
                                                           scope="thread")),
        "My friend uses Java.": facts(fact("tech_stack", "Java", "My friend uses Java", entity_type="project",
                                           entity_id="friend")),
    }
    fake_llm.responder = lambda text: answers.get(text, facts())
    before = row_counts()

    out, _ = run(write(tmp_path, ITEMS), "--extractor", "llm", "--json")

    assert row_counts() == before
    figures = json.loads(out.splitlines()[-1])
    assert (figures["extractor"], figures["prompt_version"]) == ("llm:gpt-4.1-mini", "entity-facts-v1")
    assert (figures["tp"], figures["fp"], figures["fn"]) == (3, 1, 1)
    assert figures["noise_items"] == 1 and figures["secret_leaks"] == 0
    # The extractor saw what the pipeline shows it: the earlier messages of the thread, masked.
    thread_request = next(r for r in fake_llm.requests if message_of(r.body) == "It uses Django.")
    assert "[m-1] user: I work on the billing service." in thread_request.prompt
    assert "[m-2] assistant: What is it built with?" in thread_request.prompt
    secret_request = next(r for r in fake_llm.requests if "My password is" in message_of(r.body))
    assert "hunter2" not in secret_request.prompt


def test_a_leaked_secret_fails_the_run(tmp_path, llm_settings, fake_llm):
    # A credential the masking does not know, copied out by the model: a leak.
    fake_llm.responder = lambda text: facts(fact("preference", "orchid-7741", "combination is orchid-7741"))
    items = [{"id": "s", "text": "The locker combination is orchid-7741.", "expect": [], "secret": "orchid-7741"}]

    with pytest.raises(CommandError, match="1 secret"):
        run(write(tmp_path, items), "--extractor", "llm", "--json")


def test_the_prompt_version_is_chosen_and_recorded(tmp_path, llm_settings, fake_llm):
    out, _ = run(write(tmp_path, ITEMS[:1]), "--extractor", "llm", "--prompt-version", "entity-facts-v2", "--json")

    assert json.loads(out.splitlines()[-1])["prompt_version"] == "entity-facts-v2"
    assert "Facts about other people" in fake_llm.requests[-1].prompt  # v2's text and few-shot examples
    with pytest.raises(CommandError, match="Unknown prompt version"):
        run(write(tmp_path, ITEMS[:1]), "--extractor", "llm", "--prompt-version", "nope")


@pytest.mark.parametrize("line, problem", [
    ("not json", "line 1"),
    ('{"id": "x", "text": "hi", "expect": [{"value": "v"}]}', "line 1"),
    ('{"id": "x", "text": "hi", "expect": [{"field": "name", "value": "v", "kind": "guess"}]}', "unknown kind"),
])
def test_a_bad_line_is_named(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=problem):
        run(str(path))


def test_the_context_is_the_pipelines():
    item = load_dataset([json.dumps({"id": "x", "messages": [
        {"role": "user", "content": f"message {n}, password: hunter{n}"} for n in range(9)
    ] + [{"role": "assistant", "content": "ok"}], "expect": []})])[0]

    context = item_context(item)

    # The last *user* message is read; at most six earlier ones come along, masked, oldest first.
    assert (context.message_id, context.role) == ("m-9", "user")
    assert [prior.message_id for prior in context.thread_history] == ["m-3", "m-4", "m-5", "m-6", "m-7", "m-8"]
    assert "hunter" not in context.content + "".join(prior.content for prior in context.thread_history)


def test_entity_references_and_free_text_compare_loosely():
    item = EvalItem("x", (("user", "…"),), load_dataset([json.dumps({"id": "x", "text": "…", "expect": [
        {"field": "relation:works_on", "value": "project:Flask 迁移项目"},
        {"field": "preference", "value": "short"},
    ]})])[0].expect)
    proposed = [
        CandidateInput("user", "me", "relation:works_on", "project:flask-migration", 0.9, kind="relation"),
        CandidateInput("user", "me", "preference", "Keep answers SHORT", 0.9),
    ]

    outcome = score_item(item, proposed)

    assert len(outcome.matched) == 2 and not outcome.missed and not outcome.extra
