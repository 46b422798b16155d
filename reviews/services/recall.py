"""Recall: what an agent receives, and the record of having received it (SPEC §5)."""
from __future__ import annotations

import json

from django.conf import settings
from django.db import IntegrityError, connection
from django.utils import timezone

from ..actors import Actor
from ..errors import Forbidden
from ..hotpath import prepared_cursor
from ..replicas import read_on_replica
from .recall_partitions import no_partition_for_row, recall_partition_for
from ..models import RecallRecord, Scope, Tenant
from ..selectors import RecallQuery, RecallResult, recall_select
from .boundary import screened


@screened
def recall_perform(
    *, tenant: Tenant, query: RecallQuery, actor: Actor, may_see_sensitive: bool
) -> tuple[RecallRecord, RecallResult]:
    """Select the facts a caller may receive and record which versions it received.

    1. ``include_sensitive`` from a caller without ``recall:sensitive`` is refused
       outright rather than silently ignored, so a misconfigured agent finds out.
    2. Select under SPEC §5's policy (one query), on a read replica when one is
       configured and current (reviews/replicas.py), else on the primary.
    3. Write the recall record on the primary (one INSERT; the caller's query arrives
       with its credentials masked by the service boundary).

    A recall changes no memory, so it writes no audit event: the recall record is its
    trace, and an event per read would serialise every recall of a tenant on the audit
    chain's head lock. Not wrapped in a transaction: its only write is one INSERT.
    """
    if query.include_sensitive and not may_see_sensitive:
        raise Forbidden(
            "Sensitive facts need an API key with the 'recall:sensitive' scope.",
            details={"scope": Scope.RECALL_SENSITIVE},
        )
    result = read_on_replica(
        lambda alias: recall_select(tenant=tenant, query=query, may_see_sensitive=may_see_sensitive, using=alias)
    )
    record = RecallRecord(
        tenant=tenant,
        user_id=query.user_id,
        caller=str(actor),
        query=query.as_record(),
        facts=[{"id": fact["id"], "version": fact["version"]} for fact in result.facts],
        created_at=timezone.now(),
    )
    _insert(record)
    return record, result


def _insert(record: RecallRecord) -> None:
    """One INSERT written out: on the hot path the ORM's save() cost a third of a recall.

    With ``MEMORY_RECALL_ASYNC_COMMIT`` the statement itself turns off
    ``synchronous_commit`` for its own transaction (``set_config(..., true)`` in a CTE),
    so the commit does not wait for the WAL flush and no extra round trip is spent on a
    ``SET``. That is done only in autocommit, where the statement is its whole
    transaction: inside an atomic block it would also weaken every other write of that
    transaction, so there the record is committed durably with the rest.
    """
    columns = ("tenant_id", "user_id", "caller", "query", "facts", "created_at")
    values = [
        record.tenant_id,
        record.user_id,
        record.caller,
        json.dumps(record.query, ensure_ascii=False),
        json.dumps(record.facts),
        connection.ops.adapt_datetimefield_value(record.created_at),
    ]
    table = RecallRecord._meta.db_table
    if settings.MEMORY_RECALL_ASYNC_COMMIT and connection.vendor == "postgresql" and not connection.in_atomic_block:
        sql = (
            "WITH commit_mode AS (SELECT set_config('synchronous_commit', 'off', true)) "
            # Typed: unlike VALUES, a SELECT list does not take its types from the columns.
            f"INSERT INTO {table} ({', '.join(columns)}) "
            "SELECT %s::bigint, %s, %s, %s::jsonb, %s::jsonb, %s::timestamptz FROM commit_mode RETURNING id"
        )
    else:
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}) RETURNING id"
    with prepared_cursor() as cursor:
        try:
            cursor.execute(sql, values)
        except IntegrityError as error:
            # The record's day has no partition (the beat, which makes them a week ahead,
            # has not run for that long): make it and write again. Inside a transaction the
            # failed statement has aborted it, so there the error stands.
            if connection.in_atomic_block or not no_partition_for_row(error):
                raise
            recall_partition_for(record.created_at)
            cursor.execute(sql, values)
        record.pk = cursor.fetchone()[0]
    record._state.adding = False
