"""memory_portal/wsgi.py: what a (forking) WSGI server loads before the first request."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loading_the_app_imports_every_view_before_the_first_request():
    """With gunicorn's preload the workers then share these modules, and no first request
    pays for importing them."""
    probe = "import sys, memory_portal.wsgi; print(sorted(m for m in ('reviews.api.recall', 'reviews.views') if m in sys.modules))"

    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()

    assert loaded == "['reviews.api.recall', 'reviews.views']"
