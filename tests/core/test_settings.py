"""Settings come from one parser, and every variable it reads is documented (SPEC §8)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ = re.compile(r'\benv\.\w+\(\s*"([A-Z][A-Z0-9_]*)"')
DOCUMENTED = re.compile(r"`([A-Z][A-Z0-9_]+)`")


def _settings_table() -> str:
    page = (ROOT / "docs" / "configuration.md").read_text()
    section = page.split("# Configuration", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line for line in section.splitlines() if line.startswith("| `"))


def _variables_read() -> set[str]:
    names = set()
    for path in (ROOT / "memory_portal" / "settings.py", ROOT / "gunicorn.conf.py"):
        names |= set(READ.findall(path.read_text()))
    return names


def test_every_variable_the_settings_read_is_in_the_configuration_table():
    read = _variables_read()
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "MEMORY_API_KEY_CACHE_SECONDS"} <= read
    documented = {name for row in _settings_table().splitlines() for name in DOCUMENTED.findall(row.split(" | ")[0])}
    assert sorted(read - documented) == []


def test_nothing_reads_the_environment_beside_the_one_parser():
    # Entry points may name the settings module; nothing else touches the environment.
    readers = re.compile(r"os\.environ(?!\.setdefault\(\"DJANGO_SETTINGS_MODULE\")|getenv\(")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("memory_portal", "reviews")
        for path in (ROOT / folder).rglob("*.py")
        if readers.search(path.read_text())
    ]
    offenders += [name for name in ("gunicorn.conf.py",) if readers.search((ROOT / name).read_text())]
    assert offenders == []
