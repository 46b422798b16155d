"""What the repository must never carry: a virtualenv (a fresh clone builds its own) or
the markers of an unresolved merge.

Twice a worktree's ``.venv`` link was committed (``git commit -a`` picks up a tracked file
even though ``.gitignore`` names it); a clone then pointed at a virtualenv of one machine.
Once a stylesheet was committed with conflict markers in it, which silently voided the
rule after each marker: no test looked at the CSS.
"""
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
