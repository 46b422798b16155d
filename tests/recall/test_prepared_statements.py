"""Recall's statement is prepared on PostgreSQL, through Django's and psycopg's documented
options only (memory_portal/settings.py: DATABASE_SERVER_SIDE_BINDING, DATABASE_PREPARE_THRESHOLD).

Django turns psycopg's prepared statements off unless the database's OPTIONS name a
threshold, so server-side binding alone prepares nothing: this holds that both are set and
that PostgreSQL really keeps the recall statement prepared on the connection."""
import pytest
from django.conf import settings
from django.db import connection

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not settings.IS_POSTGRES, reason="prepared statements are PostgreSQL's"),
]


def prepared_recall_statements() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%FROM reviews_fact f JOIN reviews_entity e%"],
        )
        return cursor.fetchone()[0]


@pytest.mark.skipif(not settings.DATABASE_SERVER_SIDE_BINDING, reason="DATABASE_SERVER_SIDE_BINDING=0")
def test_a_recall_statement_run_past_the_threshold_is_prepared(recall, publish, tenant):
    publish(tenant, "u1", field="name", value="Alice")

    for _ in range(settings.DATABASE_PREPARE_THRESHOLD + 1):
        _, result = recall("u1")
        assert [fact["value"] for fact in result.facts] == ["Alice"]

    # At least one: the connection lives across tests, and a recall that explains (two
    # statuses) is another statement text.
    assert prepared_recall_statements() >= 1


@pytest.mark.skipif(settings.DATABASE_SERVER_SIDE_BINDING, reason="server-side binding is on")
def test_without_server_side_binding_nothing_is_prepared(recall, publish, tenant):
    publish(tenant, "u1", field="name", value="Alice")

    for _ in range(settings.DATABASE_PREPARE_THRESHOLD + 1):
        recall("u1")

    assert prepared_recall_statements() == 0
