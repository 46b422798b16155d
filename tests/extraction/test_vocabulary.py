"""Technologies by name: every entry of the vocabulary is reachable, where a project uses it."""
import pytest

from reviews.extraction.base import ExtractionContext
from reviews.extraction.patterns import tech
from reviews.extraction.rules import RuleExtractor
from reviews.extraction.vocabulary import VOCABULARY


def proposed(text):
    context = ExtractionContext(user_id="u", thread_id="t", message_id="m-1", role="user", content=text)
    return [(c.field, c.value) for c in RuleExtractor().extract(context).candidates]


CURATED = sorted({**tech.DATABASES, **tech.MORE_DATABASES, **tech.STACK, **tech.MORE_STACK}.items())


@pytest.mark.parametrize("written, stored", CURATED)
def test_each_database_and_framework_is_reachable(written, stored):
    field = "database" if stored in VOCABULARY.database_names else "tech_stack"

    assert (field, stored) in proposed(f"Our ledger service runs on {written}.")
    assert (field, stored) in proposed(f"账本项目用的是 {written}。")


def test_the_languages_pygments_ships_are_reachable_as_written():
    languages = sorted(VOCABULARY.exact)

    assert {"Python", "Elixir", "Haskell", "OCaml", "Zig", "Julia", "Lua", "F#", "Dart"} <= set(languages)
    for name in languages:
        assert ("tech_stack", VOCABULARY.exact[name]) in proposed(f"Our ledger service is written in {name}."), name


def test_a_language_named_like_a_word_counts_only_as_written_and_where_a_project_uses_it():
    assert proposed("Our ledger service is written in Go.") == [("tech_stack", "Go")]
    assert proposed("Our ledger service will go live in May.") == []
    assert proposed("I go by Julia.") == [("name", "Julia")]


def test_the_longest_name_wins():
    names = [mention.name for mention in VOCABULARY.find("We built it with React Native and Spring Boot on SQL Server.")]

    assert names == ["React Native", "Spring Boot", "SQL Server"]


def test_ordinary_words_among_lexer_names_are_left_out():
    assert not {"Text", "Email", "Red", "Ring", "Pony", "Diff", "INI"} & set(VOCABULARY.exact)
