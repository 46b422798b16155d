"""What the repository must never carry: a fresh clone builds its own virtualenv.

Twice a worktree's ``.venv`` link was committed (``git commit -a`` picks up a tracked file
even though ``.gitignore`` names it); a clone then pointed at a virtualenv of one machine.
"""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_no_virtualenv_is_tracked():
    tracked = subprocess.run(
        ["git", "ls-files", "--", ".venv", "venv", "*/site-packages/*"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert tracked == []
