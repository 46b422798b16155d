"""The README and docs/ stand alone: every command's arguments are in the Commands table of
docs/operations.md, and no page cites a document (or a section of one) the repository does
not hold."""
import re
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Options every Django command has; the table does not repeat them.
DJANGO_OPTIONS = {
    "--help", "--version", "--verbosity", "--settings", "--pythonpath", "--traceback",
    "--no-color", "--force-color", "--skip-checks",
}


def _commands_table() -> dict[str, str]:
    section = OPERATIONS.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `(\w+)([^`]*)` \|", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_every_command_and_its_options_are_in_the_commands_table():
    table = _commands_table()
    ours = sorted(name for name, app in get_commands().items() if app == "reviews")
    assert sorted(table) == ours
    for name in ours:
        parser = load_command_class("reviews", name).create_parser("manage.py", name)
        for action in parser._actions:
            if action.option_strings:
                long_options = [option for option in action.option_strings if option.startswith("--")]
                if set(long_options) & DJANGO_OPTIONS:
                    continue
                assert any(option in table[name] for option in action.option_strings), (name, long_options)
            else:  # a positional argument: named in capitals (SLUG, USER_ID, DATASET.jsonl)
                assert re.search(r"\b[A-Z][A-Z_]+\b", table[name]), (name, action.dest)


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
