"""The projection through a real Celery worker on a real Redis: an approval commits, the
task is enqueued on commit, the worker projects, and an agent's own PostgresStore sees it."""
import pytest
from langgraph.store.postgres import PostgresStore

from reviews import publication
from reviews.actors import Actor
from reviews.models import Candidate
from reviews.services.candidates import candidate_approve
from reviews.services.erasure import fact_delete
from reviews.services.tenants import tenant_create
from tests.conftest import candidate
from tests.worker.brokers import celery_using_broker
from tests.worker.conftest import celery_worker, redis_server, wait_for  # noqa: F401 (fixtures)

from .conftest import wipe

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
REVIEWER = Actor("reviewer", "r1")


def test_a_worker_projects_approval_and_deletion(redis_server, celery_worker, submit):  # noqa: F811
    broker, _ = redis_server()
    celery_worker(broker)
    wipe(publication.get_store())
    tenant = tenant_create(slug="workers")
    pending = submit(tenant, "user-7", candidate(field="name", value="Alice", confidence=0.85))[0]

    with celery_using_broker(broker), PostgresStore.from_conn_string(publication.store_location()[1]) as agent_store:

        def seen():
            item = agent_store.get(("tenants", "workers", "users"), "user-7")
            return item.value["facts"]["name"]["value"] if item else None

        version = Candidate.objects.get(pk=pending.candidate_id).version
        approved = candidate_approve(tenant=tenant, candidate_id=pending.candidate_id, version=version, actor=REVIEWER)
        wait_for(lambda: seen() == "Alice", 10, "the worker to project the approval")

        fact_delete(tenant=tenant, fact_id=approved.fact_id, actor=REVIEWER)
        wait_for(lambda: seen() is None, 10, "the worker to project the deletion")
    wipe(publication.get_store())
