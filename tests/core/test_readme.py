"""The README stands alone: every command's arguments are in its Commands table, and it
cites no document the repository does not hold."""
import re
from pathlib import Path

from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
# Options every Django command has; the README does not repeat them.
DJANGO_OPTIONS = {
    "--help", "--version", "--verbosity", "--settings", "--pythonpath", "--traceback",
    "--no-color", "--force-color", "--skip-checks",
}


def _commands_table() -> dict[str, str]:
    section = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `(\w+)([^`]*)` \|", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_every_command_and_its_options_are_in_the_readme():
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


def test_the_readme_cites_only_what_the_repository_holds():
    assert "SPEC" not in README
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), target
