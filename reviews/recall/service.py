"""Recall: what an agent receives, and the record of having received it (SPEC §5)."""
from __future__ import annotations

from django.utils import timezone

from ..actors import Actor
from ..errors import Forbidden
from ..models import RecallRecord, Scope, Tenant
from .replicas import read_on_replica
from .query import RecallQuery, RecallResult, recall_select
from ..services.boundary import screened
from .records import recall_record_write


@screened
def recall_perform(
    *, tenant: Tenant, query: RecallQuery, actor: Actor, may_see_sensitive: bool
) -> tuple[RecallRecord, RecallResult]:
    """Select the facts a caller may receive and record which versions it received.

    1. ``include_sensitive`` from a caller without ``recall:sensitive`` is refused
       outright rather than silently ignored, so a misconfigured agent finds out.
    2. Select under SPEC §5's policy (one query), on a read replica when one is
       configured and current (reviews/recall/replicas.py), else on the primary.
    3. Write the recall record on the primary (one INSERT), or hand it to the stream the
       drain writes from (reviews/recall/records.py); either way its id is
       known now. The caller's query arrives with its credentials masked by the service
       boundary.

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
    recall_record_write(record)
    return record, result
