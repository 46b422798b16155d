"""Claims: a reviewer's lease on the next items of the queue (SPEC §4).

A claim hides an open item from colleagues until it expires (``MEMORY_REVIEW_CLAIM_MINUTES``,
15 by default) or its holder releases it; it is renewed while its holder works (each
decision, each queue page). A claim is not a decision: it changes no status and no
version, and a colleague who asks to see claimed items may still decide one (the usual
compare-and-set settles any race). Two reviewers claiming at once never get the same
item: the rows are picked with ``FOR UPDATE SKIP LOCKED`` and re-checked as they are
written.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput
from ..models import AuditAction, Candidate, CandidateStatus, Tenant
from ..selectors.queue import QUEUE_ORDER, QueueClaims, QueueFilters, queue_filtered
from .boundary import service

MAX_CLAIM = 100


def claim_lease() -> timedelta:
    return timedelta(minutes=settings.MEMORY_REVIEW_CLAIM_MINUTES)


def _live(actor: Actor, now: datetime):
    """The actor's live claims on items waiting for a reviewer: an item sent to the subject
    (deferred) is out of the reviewer's hands, and counting it made "released 6" follow
    "claimed 5"."""
    return Candidate.objects.filter(claimed_by=str(actor), claim_expires_at__gt=now, status=CandidateStatus.PENDING_REVIEW)


@service
def candidates_claim(
    *, tenant: Tenant, actor: Actor, count: int, filters: QueueFilters | None = None, now: datetime | None = None
) -> list[int]:
    """Claim the next ``count`` items waiting for a reviewer, in the queue's order and filters.

    1. Renew the actor's live claims (they are still working).
    2. Pick the next unclaimed ``pending_review`` items, skipping rows another claim is
       writing at this moment, and write the claim only where the row is still free.
    3. Audit the claim (the ids) as one event. Returns the ids newly claimed.
    """
    if not 1 <= count <= MAX_CLAIM:
        raise InvalidInput(f"Claim between 1 and {MAX_CLAIM} items.", details={"count": count})
    now = now or timezone.now()
    until = now + claim_lease()
    tenant_live = _live(actor, now).filter(tenant=tenant)
    tenant_live.update(claim_expires_at=until)
    filters = filters or QueueFilters()
    free = Q(claim_expires_at__isnull=True) | Q(claim_expires_at__lte=now)
    pick = (
        queue_filtered(tenant=tenant, filters=QueueFilters(**{**filters.__dict__, "claims": QueueClaims.ALL}), now=now)
        .filter(free, status=CandidateStatus.PENDING_REVIEW)
        .order_by(*QUEUE_ORDER[filters.sort])
        # Outside the subject-first lock order (models.locks.lock_subject), safely: a claim never
        # waits for a candidate row (skip_locked) and, writing only the claim columns, takes
        # the weaker NO KEY lock that commit-time foreign-key checks do not wait for.
        .select_for_update(skip_locked=True, no_key=True, of=("self",))
        .values_list("pk", flat=True)[:count]
    )
    ids = list(pick)
    if ids:
        Candidate.objects.filter(pk__in=ids).filter(free).update(claimed_by=str(actor), claim_expires_at=until)
        ids = list(Candidate.objects.filter(pk__in=ids, claimed_by=str(actor), claim_expires_at=until).values_list("pk", flat=True))
    if ids:
        audit.record(
            tenant.pk,
            EventDraft(
                actor=str(actor),
                action=AuditAction.CANDIDATES_CLAIMED,
                object_type="candidate_selection",
                object_id=len(ids),
                after={"ids": sorted(ids), "until": until.isoformat()},
            ),
        )
    return sorted(ids)


# A claim renewed less than this long ago is left as it is (at most half the lease).
RENEWAL_STEP = timedelta(minutes=1)


def candidates_claims_renew(*, tenant: Tenant, actor: Actor, now: datetime | None = None) -> int:
    """Extend the actor's live claims by a full lease; expired ones stay expired. Returns
    how many were extended.

    Claims renewed within the last :data:`RENEWAL_STEP` are skipped: a reviewer opens a
    page or decides every few seconds, and rewriting every held row each time was a
    committed write per page (3-9 ms of it on the development machine) and dead rows for
    the vacuum; the lease still runs at least its length less a minute from the last
    activity. A renewal is activity, not a change of who holds what, so it is not audited
    (the claim and the decisions that renew it are).
    """
    now = now or timezone.now()
    lease = claim_lease()
    renewed_recently = now + lease - min(RENEWAL_STEP, lease / 2)
    return (
        _live(actor, now)
        .filter(tenant=tenant, claim_expires_at__lt=renewed_recently)
        .update(claim_expires_at=now + lease)
    )


@service
def candidates_release(*, tenant: Tenant, actor: Actor, now: datetime | None = None) -> list[int]:
    """Give back every live claim of the actor, audited."""
    now = now or timezone.now()
    held = _live(actor, now).filter(tenant=tenant)
    ids = sorted(held.values_list("pk", flat=True))
    if ids:
        Candidate.objects.filter(pk__in=ids).update(claimed_by="", claim_expires_at=None)
        audit.record(
            tenant.pk,
            EventDraft(
                actor=str(actor),
                action=AuditAction.CANDIDATES_RELEASED,
                object_type="candidate_selection",
                object_id=len(ids),
                before={"ids": ids},
            ),
        )
    return ids
