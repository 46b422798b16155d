from contextlib import contextmanager

import pytest

from tests.dump import dump_all_tables
from tests.publication.conftest import store  # noqa: F401  (the projection's store, wiped)

from .memory import build_memory


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed():`` runs what the block defers to its commit (the projection), as
    production does (the test's transaction never commits)."""

    @contextmanager
    def run():
        with django_capture_on_commit_callbacks(execute=True):
            yield

    return run


@pytest.fixture
def memory(tenant, publish, submit, store, committed):  # noqa: F811
    """The subject's memory, projected into the store."""
    with committed():
        return build_memory(tenant, publish, submit)


def surviving(values) -> dict[str, list[str]]:
    """{value: [tables]} for each of ``values`` still found in the database (case-insensitive)."""
    tables = [chunk.partition("\n") for chunk in dump_all_tables().casefold().split("== ")[1:]]
    found = {value: [name for name, _, rows in tables if value.casefold() in rows] for value in values}
    return {value: names for value, names in found.items() if names}
