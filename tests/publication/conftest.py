import pytest
from langgraph.store.base import PutOp

from reviews import publication


def wipe(store) -> None:
    doomed = [PutOp(tuple(item.namespace), item.key, None) for item in publication._search_all(store, ("tenants",))]
    for start in range(0, len(doomed), 500):
        store.batch(doomed[start : start + 500])


@pytest.fixture
def store(db):
    """The projection's store, empty: its rows live outside the test's transaction."""
    store = publication.get_store()
    wipe(store)
    yield store
    wipe(store)


def user_item(store, user_id, tenant_slug="tenant-1"):
    item = store.get(("tenants", tenant_slug, "users"), user_id)
    return item.value if item else None
