"""The tamper-evident audit chain (SPEC §6).

Each tenant has its own chain. An event's hash covers the previous hash and the event's
fields, where values appear only as keyed digests; so erasing a subject's readable values
(their :class:`AuditPayload` rows) leaves every hash intact.

Writers call :func:`record` (one event) or :func:`record_many` inside the service's
transaction; both lock the tenant's chain head, so concurrent writers append in turn.
That is the *last* lock a writer takes: the subject and its rows come first (the lock
order is written down at :func:`reviews.models.locks.lock_subject`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Iterator

from django.utils import timezone
from django.utils.translation import gettext as _

from . import metrics
from .context import current_request_id
from .models import AuditChainHead, AuditEvent, AuditPayload
from .policy.normalize import digest_matches, keyed_digest
from .transactions import in_transaction
from .webhooks import outbox

if TYPE_CHECKING:
    from .actors import Actor
    from .models import Subject

GENESIS_HASH = "0" * 64


@dataclass
class EventDraft:
    actor: str
    action: str
    object_type: str
    object_id: str | int
    subject_user_id: str = ""
    before: dict | None = None
    after: dict | None = None
    reason: str = ""
    reason_code: str = ""
    extra: dict = field(default_factory=dict)

    @classmethod
    def about(
        cls, object_type: str, object_id: str | int, action: str, *, subject: Subject, actor: Actor, **recorded
    ) -> EventDraft:
        """The event of a change to one object of one subject's memory, the form most take:
        the actor rendered once, the subject named by its user id. ``recorded`` holds the
        rest (before, after, reason, reason_code). An actor that came through someone else
        (a subject answering in a host app) has that recorded beside the new state."""
        if actor.via:
            recorded["after"] = {**(recorded.get("after") or {}), "via": actor.via}
        return cls(
            actor=str(actor),
            action=action,
            object_type=object_type,
            object_id=object_id,
            subject_user_id=subject.user_id,
            **recorded,
        )


def event_hash(*, prev_hash: str, event: AuditEvent) -> str:
    material = [
        prev_hash,
        event.tenant_id,
        event.seq,
        event.created_at.isoformat(),
        event.actor,
        event.action,
        event.object_type,
        event.object_id,
        event.subject_user_id,
        event.before_digest,
        event.after_digest,
        event.reason_digest,
        event.reason_code,
        event.request_id,
    ]
    encoded = json.dumps(material, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


def record(tenant_id: int, draft: EventDraft) -> AuditEvent:
    return record_many(tenant_id, [draft])[0]


def record_many(tenant_id: int, drafts: Iterable[EventDraft]) -> list[AuditEvent]:
    """Append events to the tenant's chain in the caller's transaction."""
    drafts = list(drafts)
    if not drafts:
        return []
    if not in_transaction():
        raise RuntimeError("audit.record_many must run inside the service's transaction")
    head = AuditChainHead.objects.select_for_update().filter(tenant_id=tenant_id).first()
    if head is None:
        AuditChainHead.objects.get_or_create(tenant_id=tenant_id, defaults={"seq": 0, "hash": GENESIS_HASH})
        head = AuditChainHead.objects.select_for_update().get(tenant_id=tenant_id)
    now = timezone.now()
    request_id = current_request_id.get()
    events, payloads = [], []
    prev_hash, seq = head.hash, head.seq
    for draft in drafts:
        seq += 1
        event = AuditEvent(
            tenant_id=tenant_id,
            seq=seq,
            created_at=now,
            actor=draft.actor,
            action=draft.action,
            object_type=draft.object_type,
            object_id=str(draft.object_id),
            subject_user_id=draft.subject_user_id,
            before_digest=keyed_digest(draft.before),
            after_digest=keyed_digest(draft.after),
            reason_digest=keyed_digest(draft.reason),
            reason_code=draft.reason_code,
            request_id=request_id,
            prev_hash=prev_hash,
        )
        event.hash = prev_hash = event_hash(prev_hash=prev_hash, event=event)
        events.append(event)
        payloads.append((draft.before, draft.after, draft.reason, draft.subject_user_id))
    AuditEvent.objects.bulk_create(events)
    AuditPayload.objects.bulk_create(
        AuditPayload(
            event=event,
            tenant_id=tenant_id,
            subject_user_id=subject_user_id,
            before=before,
            after=after,
            reason=reason,
        )
        for event, (before, after, reason, subject_user_id) in zip(events, payloads)
        if before is not None or after is not None or reason
    )
    AuditChainHead.objects.filter(tenant_id=tenant_id).update(seq=seq, hash=prev_hash)
    # The changes host apps hear of (SPEC §7b): their outbox rows, in this same transaction.
    outbox.emit(tenant_id, drafts)
    metrics.count_audited(drafts)
    return events


@dataclass(frozen=True)
class Break:
    tenant_id: int
    seq: int
    event_id: int
    problem: str

    def __str__(self) -> str:
        return f"tenant {self.tenant_id}: event #{self.seq} (id {self.event_id}): {self.problem}"


@dataclass
class VerifyResult:
    tenant_id: int
    events: int
    head_hash: str
    broken: Break | None

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify_events(tenant_id: int, events: Iterable[AuditEvent], payloads: dict | None = None) -> VerifyResult:
    """Walk a tenant's events in sequence order; report the first broken link.

    ``payloads`` maps event id to its payload row, to check the readable values still
    match their digests (an erased event simply has none).
    """
    prev_hash, expected_seq, count = GENESIS_HASH, 1, 0
    for event in events:
        count += 1
        problem = None
        if event.seq != expected_seq:
            problem = _("sequence gap: expected event #%(seq)s") % {"seq": expected_seq}
        elif event.prev_hash != prev_hash:
            problem = _("previous-hash link does not match the event before it")
        elif event_hash(prev_hash=prev_hash, event=event) != event.hash:
            problem = _("content does not match its hash")
        elif payloads is not None and event.pk in payloads:
            payload = payloads[event.pk]
            if (
                not digest_matches(payload.before, event.before_digest)
                or not digest_matches(payload.after, event.after_digest)
                or not digest_matches(payload.reason, event.reason_digest)
            ):
                problem = _("stored values do not match their digests")
        if problem:
            return VerifyResult(tenant_id, count, prev_hash, Break(tenant_id, event.seq, event.pk, problem))
        prev_hash, expected_seq = event.hash, expected_seq + 1
    return VerifyResult(tenant_id, count, prev_hash, None)


def _iter_chunked(tenant_id: int, chunk: int = 2000) -> Iterator[tuple[AuditEvent, dict]]:
    last_seq = 0
    while True:
        events = list(AuditEvent.objects.filter(tenant_id=tenant_id, seq__gt=last_seq).order_by("seq")[:chunk])
        if not events:
            return
        payloads = AuditPayload.objects.in_bulk([e.pk for e in events], field_name="event_id")
        for event in events:
            yield event, payloads
        last_seq = events[-1].seq


def verify_tenant(tenant_id: int) -> VerifyResult:
    """Verify one tenant's stored chain, payloads and head, in constant memory."""
    payload_map: dict = {}

    def events():
        for event, payloads in _iter_chunked(tenant_id):
            payload_map.clear()
            payload_map.update(payloads)
            yield event

    result = verify_events(tenant_id, events(), payload_map)
    if result.ok:
        head = AuditChainHead.objects.filter(tenant_id=tenant_id).first()
        if head is not None and (head.seq != result.events or head.hash != result.head_hash):
            result.broken = Break(tenant_id, head.seq, 0, "chain head does not match the last event (events removed?)")
    return result
