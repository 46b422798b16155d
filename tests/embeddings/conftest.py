from contextlib import contextmanager

import pytest

from tests.publication.conftest import store  # noqa: F401  (the projection's store, wiped)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed():`` runs what the block defers to its commit (projection and
    embedding), as production does (the test's transaction never commits)."""

    @contextmanager
    def run():
        with django_capture_on_commit_callbacks(execute=True):
            yield

    return run
