"""The README and docs/ stand alone: every command's arguments are in the Commands table of
docs/operations.md, and no page cites a document (or a section of one) the repository does
not hold."""
import re
from pathlib import Path

import pytest
from django.core.management import BaseCommand, get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands_table() -> dict[str, str]:
    section = OPERATIONS.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `(\w+)([^`]*)` \|", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def _arguments(parser) -> tuple[list[tuple[str, ...]], str]:
    """A command's options, each as its spellings, and its usage line, read from argparse's
    public help text ("  -o FILE, --output FILE   what it does")."""
    options = []
    for line in parser.format_help().splitlines():
        match = re.match(r"  (-[^ ].*?)(?:  |$)", line)
        if match:
            options.append(tuple(re.findall(r"(?<![\w-])(--?[\w-]+)", match.group(1))))
    return options, parser.format_usage()


def _positionals(text: str) -> list[str]:
    """What is left of a usage line once the options and their metavars are taken out."""
    without_options = re.sub(r"(?<![\w-])--?[\w-]+(?: (?:[A-Z][\w.|\\]*|\{[^}]*\}))?", " ", text)
    return re.findall(r"(?<![\w.])[A-Za-z][\w.]*", without_options)


def test_every_command_and_its_options_are_in_the_commands_table():
    table = _commands_table()
    ours = sorted(name for name, app in get_commands().items() if app == "reviews")
    assert sorted(table) == ours
    # Options every Django command has; the table does not repeat them.
    django_options, _ = _arguments(BaseCommand().create_parser("manage.py", "bare"))
    for name in ours:
        options, usage = _arguments(load_command_class("reviews", name).create_parser("manage.py", name))
        for spellings in options:
            if spellings not in django_options:
                shown = [option for option in spellings if re.search(rf"(?<![\w-]){option}(?![\w-])", table[name])]
                assert shown, (name, spellings)
        # Positional arguments: as many at the start of the table's row, in capitals (SLUG,
        # USER_ID, DATASET.jsonl), as the usage line has (by their lowercase dest).
        in_table = re.match(r"((?: [A-Z][A-Z_]*(?:\.\w+)?)*)", table[name]).group(1).split()
        assert len(in_table) == len(_positionals(usage.split(name, 1)[1])), (name, in_table)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(), re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return anchors


def test_the_readme_cites_no_spec():
    assert "SPEC" not in README


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_links_reach_what_the_repository_holds(page):
    for target, anchor in re.findall(r"\]\(((?!https?:)[^)#]*)(?:#([^)]*))?\)", page.read_text()):
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), (page.name, target)
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), (page.name, target, anchor)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_paths_a_page_names_exist(page):
    # Code moves; a page that still points at the old place sends the reader nowhere.
    named = re.findall(r"`((?:reviews|memory_portal|bench|bin|tests|templates|static|locale)/[\w./-]*)`", page.read_text())
    assert [path for path in named if not (ROOT / path.rstrip("/")).exists()] == []


def test_every_audit_action_is_listed_where_the_readme_points():
    """SPEC §6: the actions are one enumeration, listed for readers (docs/concepts.md, linked
    from the README); a new member without its line fails here."""
    from reviews.models import AuditAction

    listed = (ROOT / "docs" / "concepts.md").read_text()
    assert "docs/concepts.md" in (ROOT / "README.md").read_text()
    assert [action.value for action in AuditAction if f"`{action.value}`" not in listed] == []
