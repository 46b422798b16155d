"""What the repository must never carry: a virtualenv (a fresh clone builds its own), the
markers of an unresolved merge, or a browser assertion that does not wait for the page.

Twice a worktree's ``.venv`` link was committed (``git commit -a`` picks up a tracked file
even though ``.gitignore`` names it); a clone then pointed at a virtualenv of one machine.
Once a stylesheet was committed with conflict markers in it, which silently voided the
rule after each marker: no test looked at the CSS.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


needs_git = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")


@needs_git
def test_no_virtualenv_is_tracked():
    tracked = subprocess.run(
        ["git", "ls-files", "--", ".venv", "venv", "*/site-packages/*"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert tracked == []


@needs_git
def test_no_file_holds_an_unresolved_merge():
    # git grep exits 1 when nothing matches; a line of seven '=' alone also fences
    # reStructuredText headings, so only the opening and closing markers are looked for.
    found = subprocess.run(
        ["git", "grep", "-nE", "^(<<<<<<<|>>>>>>>)( |$)"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert found.returncode == 1, found.stdout


def test_browser_tests_read_the_page_through_waiting_assertions():
    # Locator.is_visible() answers at once: right after a click that loads a page it reads
    # the old page or nothing, and the test fails only when the machine is busy.
    # Playwright's expect(...).to_be_visible() waits for the page to get there.
    instant = re.compile(r"assert .*\.is_(visible|hidden|checked|enabled|disabled|editable)\(\)")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "tests" / "browser").glob("**/*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if instant.search(line)
    ]
    assert offenders == []
