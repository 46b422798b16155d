"""memory_portal/wsgi.py: what a (forking) WSGI server loads before the first request."""
import ast
import os
import subprocess
import sys
from pathlib import Path

from memory_portal.collector import OLD_GENERATION_THRESHOLD, YOUNG_GENERATION_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]


def test_loading_the_app_imports_every_view_before_the_first_request():
    """With gunicorn's preload the workers then share these modules, and no first request
    pays for importing them."""
    probe = "import sys, memory_portal.wsgi; print(sorted(m for m in ('reviews.api.recall', 'reviews.views') if m in sys.modules))"

    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()

    assert loaded == "['reviews.api.recall', 'reviews.views']"


def test_gunicorn_sets_the_collector_up_for_serving_before_each_fork():
    """gunicorn.conf.py's pre_fork freezes what the master loaded and raises the young and
    old generations' thresholds (memory_portal/collector.py); run in a process of its own,
    as freezing cannot be undone for everything this one holds."""
    probe = (
        "import gc, memory_portal.wsgi\n"
        "settings = {}\n"
        "exec(compile(open('gunicorn.conf.py').read(), 'gunicorn.conf.py', 'exec'), settings)\n"
        "before = (gc.get_freeze_count(), gc.get_threshold())\n"
        "settings['pre_fork'](None, None)\n"
        "print(repr((before, (gc.get_freeze_count(), gc.get_threshold()))))"
    )

    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()

    (frozen_before, (young, middle, old)), (frozen_after, threshold_after) = ast.literal_eval(shown)
    assert frozen_before == 0 and frozen_after > 10_000  # loading alone freezes nothing
    # The middle generation's threshold is Python's own, whatever the default.
    assert young < YOUNG_GENERATION_THRESHOLD and old < OLD_GENERATION_THRESHOLD
    assert threshold_after == (YOUNG_GENERATION_THRESHOLD, middle, OLD_GENERATION_THRESHOLD)


def test_gunicorn_loads_the_sentence_encoder_in_the_master_and_a_forked_worker_uses_it():
    """gunicorn.conf.py's when_ready loads the local encoder and embeds the relevance bar's
    reference sentences before any worker forks: workers share the weights and none makes
    its first question wait. A forked child then embeds a question with them (BLAS used
    before a fork must still work after it: a hang here fails the run's timeout)."""
    probe = (
        "import os, sys, memory_portal.wsgi\n"
        "from reviews.embeddings.embedders import configured_embedder\n"
        "settings = {}\n"
        "exec(compile(open('gunicorn.conf.py').read(), 'gunicorn.conf.py', 'exec'), settings)\n"
        "embedder = configured_embedder()\n"
        "before = (embedder._model is not None, embedder._generic is not None, embedder._personal is not None)\n"
        "settings['when_ready'](None)\n"
        "after = (embedder._model is not None, embedder._generic is not None, embedder._personal is not None)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    question = embedder.embed_question('what does she drink in the morning')\n"
        "    sys.exit(0 if question.vector.shape == (512,) else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(repr((before, after, os.waitstatus_to_exitcode(status))))"
    )

    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, "MEMORY_EMBEDDER": "local"},
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.strip()

    assert ast.literal_eval(shown) == ((False, False, False), (True, True, True), 0)
