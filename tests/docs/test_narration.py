"""The README stays short, and the repository holds no run diaries.

The README is for the person arriving (what it is, the two commands, the addresses, where
to read on); everything else lives in docs/. Figures belong in docs/benchmarks.md, one
table per bench, and their history in git: no page, comment or message narrates who ran
what on which machine under which load.
"""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 300
ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth"
    "|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|nth|\\d+(?:st|nd|rd|th)"
)
NARRATION = {
    "a machine counted": re.compile(rf"\b(?:{ORDINALS})[ -]machine(?![-\w])", re.I),
    # "this session key" is Django's session, not a diary.
    "this session": re.compile(r"\bthis session\b(?!\s+(?:key|cookie|data|store|binding|engine))", re.I),
    "an earlier or later session": re.compile(r"\b(?:an earlier|a later|the previous|the next|the last) session\b", re.I),
    "the lead": re.compile(r"\bthe lead\b", re.I),
    # The people who worked on it, not a job title ("a data engineer" is a fact in fixtures).
    "engineers": re.compile(
        r"\b(?:other|our|several|some|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+engineers\b"
        r"|\bengineers'", re.I,
    ),
    "load average": re.compile(r"\bload average", re.I),
}
# This file names the patterns it looks for.
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()
TEXT_SUFFIXES = {
    ".py", ".md", ".txt", ".html", ".js", ".css", ".toml", ".ini", ".cfg", ".sh", ".json", ".jsonl",
    ".po", ".yml", ".yaml", ".sql", "",
}


def tracked_text_files() -> list[str]:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True)
    names = [name for name in listing.stdout.split("\0") if name]
    return [
        name for name in names
        if Path(name).suffix in TEXT_SUFFIXES and name != SELF and (ROOT / name).is_file()
    ]


def narration_in(name: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for label, pattern in NARRATION.items():
            if pattern.search(line):
                found.append(f"{name}:{number}: {label}: {line.strip()[:120]}")
    return found


def test_the_readme_is_at_most_300_lines():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, lines


def test_no_tracked_file_narrates_runs_machines_or_people():
    files = tracked_text_files()
    assert "README.md" in files and "docs/benchmarks.md" in files
    offenders = []
    for name in files:
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a binary file without a telling suffix
        offenders += narration_in(name, text)
    assert offenders == []


def test_the_patterns_catch_narration_and_spare_ordinary_words():
    caught = [
        "On a thirteenth machine (6 December)", "the 4th machine's figures", "measured this session",
        "as the lead asked", "other engineers' test runs", "shared by eight engineers", "load average 5-7",
        "figures from an earlier session",
    ]
    spared = [
        "Hi, I'm Bob, a backend engineer at Acme.", "ML engineers at Stripe", "stored under this session key",
        "the machine's load", "leading zeros", "one machine, one core", "the first machine-readable line",
    ]
    assert all(narration_in("docs/x.md", text) for text in caught)
    assert not any(narration_in("docs/x.md", text) for text in spared)
    # Benches compare within one run: they print ratios and core counts, not the host's load.
    assert narration_in("bench/recall.py", 'print("load average", os.getloadavg())') != []
