"""The subject's self-service (SPEC §4 "my memories"): entry links, pause, export, contest.

Everything else a subject does (confirm, correct, reject, settle, edit, delete, erase)
goes through the same services the dashboard uses, with ``actor=Actor.subject(user_id)``
and ``user_id=`` restricting every lookup to that one subject.

Entry links: the host application asks for a link (``POST /api/v1/users/{id}/portal-link``
or ``manage.py subject_link``); the token is a random nonce signed with a timestamp
(:class:`~django.core.signing.TimestampSigner`), so a tampered or stale token is refused
before the database is asked. Only a digest of the token is stored, and redemption
claims the row with one compare-and-set update, so a link opens at most one session.
"""
from __future__ import annotations

import hashlib
import secrets as token_source
from datetime import timedelta
from typing import Annotated

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import Actor
from ..audit import EventDraft
from ..errors import DomainError, Forbidden, InvalidInput, InvalidTransition, NotFound
from ..models import (
    OPEN_CANDIDATE_STATUSES,
    AuditAction,
    Candidate,
    CandidateFlag,
    CandidateStatus,
    Cardinality,
    Entity,
    Fact,
    FactStatus,
    FactVersion,
    Kind,
    Message,
    PortalLink,
    Reason,
    Source,
    Subject,
    Tenant,
)
from ..publication import schedule_projection
from ..policy.pipeline import RELATION_PREFIX
from ..domain import CandidateInput
from .candidates import candidate_approve, candidate_payload, candidates_submit
from .entities import subject_get_or_create
from .facts import clean_value, relation_target
from ..models.locks import lock_subject
from .boundary import service
from ..screening import Correction, Identifier, Text, Verbatim

LINK_SALT = "reviews.portal-link"
MAX_TOKEN_LENGTH = 200
MAX_NOTE_LENGTH = 1000
EXPORT_FORMAT = "memory-portal.subject-export/1"


class PortalLinkRefused(DomainError):
    """A link that cannot open a session. ``why`` is ``invalid``, ``expired`` or ``used``."""

    code = "link_refused"
    STATUS = {"invalid": 400, "expired": 410, "used": 410}

    def __init__(self, why: str):
        super().__init__(f"This link cannot be used ({why}).", details={"why": why})
        self.why = why
        self.http_status = self.STATUS[why]


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=LINK_SALT)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _require_self(actor: Actor, user_id: str) -> None:
    """A subject acts on their own memory only; staff and keys act for the tenant."""
    if actor.is_subject and actor.id != user_id:
        raise Forbidden("A subject acts only on their own memory.")


# --- Entry links ----------------------------------------------------------------------------


@service
def portal_link_create(
    *,
    tenant: Tenant,
    user_id: Identifier,
    actor: Actor,
    base_url: Annotated[str | None, Verbatim('where a returned link points: not stored')] = None,
):
    """Mint a signed, expiring, single-use link to the subject's page; returns (url, expires_at).

    The subject row is created if the host application has not sent anything yet: a
    person may look (and pause collection) before anything is remembered.
    """
    # The subject first, as every writer locks (models.locks.lock_subject): the link refers to it.
    subject = lock_subject(subject_get_or_create(tenant=tenant, user_id=user_id).pk)
    now = timezone.now()
    expires_at = now + timedelta(seconds=settings.MEMORY_PORTAL_LINK_MAX_AGE)
    token = _signer().sign(token_source.token_urlsafe(32))
    link = PortalLink.objects.create(
        tenant=tenant,
        subject=subject,
        token_digest=token_digest(token),
        created_by=str(actor),
        created_at=now,
        expires_at=expires_at,
    )
    audit.record(
        tenant.pk,
        EventDraft.about(
            "portal_link", link.pk, AuditAction.PORTAL_LINK_CREATED, subject=subject, actor=actor,
            after={"expires_at": expires_at.isoformat()},
        ),
    )
    base = (base_url or settings.MEMORY_PUBLIC_BASE_URL).rstrip("/")
    return f"{base}{reverse('reviews:portal_enter', args=[token])}", expires_at


def _link_for_token(token: str) -> PortalLink:
    """The link a token names, refusing a tampered, expired or used one (no state change)."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        raise PortalLinkRefused("invalid")
    signature_expired = False
    try:
        _signer().unsign(token, max_age=settings.MEMORY_PORTAL_LINK_MAX_AGE)
    except signing.SignatureExpired:
        signature_expired = True
    except signing.BadSignature:
        raise PortalLinkRefused("invalid") from None
    link = (
        PortalLink.objects.select_related("tenant", "subject").filter(token_digest=token_digest(token)).first()
    )
    if link is None:
        raise PortalLinkRefused("invalid")
    if link.used_at is not None:
        raise PortalLinkRefused("used")
    if signature_expired or link.expires_at <= timezone.now():
        raise PortalLinkRefused("expired")
    return link


def portal_link_check(*, token: str) -> PortalLink:
    """Validate a link without using it: opening the page must not spend the link
    (mail scanners and chat previews fetch links before the person does)."""
    return _link_for_token(token)


def portal_link_redeem(*, token: str) -> PortalLink:
    """Spend a link, once: returns it (with its subject) or raises :class:`PortalLinkRefused`.

    1. Check signature, age and the stored row.
    2. Claim the row with ``UPDATE … WHERE used_at IS NULL``: exactly one caller wins.
    3. Audit the redemption, or the refusal of a known link (its own transaction, since
       the refusal is raised).
    """
    try:
        link = _link_for_token(token)
    except PortalLinkRefused as refused:
        if refused.why != "invalid":
            _record_refusal(token, refused.why)
        raise
    now = timezone.now()
    with transaction.atomic():
        claimed = PortalLink.objects.filter(pk=link.pk, used_at__isnull=True, expires_at__gt=now).update(used_at=now)
        if claimed:
            link.used_at = now
            audit.record(link.tenant_id, _link_event(link, AuditAction.PORTAL_LINK_REDEEMED))
            return link
    # Someone else claimed it first, or it expired between the check and the claim.
    why = "used" if PortalLink.objects.filter(pk=link.pk, used_at__isnull=False).exists() else "expired"
    _record_refusal(token, why)
    raise PortalLinkRefused(why)


@service
def _record_refusal(
    token: Annotated[str, Verbatim("a portal link's signed token: checked by its signature, stored only as a digest")],
    why: Text,
) -> None:
    link = PortalLink.objects.select_related("subject").filter(token_digest=token_digest(token)).first()
    if link is not None:
        audit.record(link.tenant_id, _link_event(link, AuditAction.PORTAL_LINK_REFUSED, reason_code=why))


def _link_event(link: PortalLink, action: str, reason_code: str = "") -> EventDraft:
    """An event of the link's use, by the subject it was made for (whoever holds it acts as them)."""
    return EventDraft.about(
        "portal_link", link.pk, action, subject=link.subject, actor=Actor.subject(link.subject.user_id),
        reason_code=reason_code,
    )


# --- Collection pause -----------------------------------------------------------------------


@service
def subject_set_paused(*, tenant: Tenant, user_id: Identifier, paused: bool, actor: Actor) -> Subject:
    """Pause or resume memory collection; while paused, ingest stores nothing new (SPEC §4)."""
    _require_self(actor, user_id)
    subject = lock_subject(subject_get_or_create(tenant=tenant, user_id=user_id).pk)
    if subject.collection_paused == paused:
        return subject
    subject.collection_paused = paused
    subject.save(update_fields=["collection_paused"])
    audit.record(
        tenant.pk,
        EventDraft.about(
            "subject", subject.pk,
            AuditAction.SUBJECT_COLLECTION_PAUSED if paused else AuditAction.SUBJECT_COLLECTION_RESUMED,
            subject=subject, actor=actor,
            before={"collection_paused": not paused},
            after={"collection_paused": paused},
        ),
    )
    return subject


# --- Contest --------------------------------------------------------------------------------


@service
def fact_contest(*, tenant: Tenant, user_id: Identifier, fact_id: int, actor: Actor, note: Text = "") -> Candidate:
    """Send a fact a reviewer approved back to review (SPEC §4).

    1. The fact must be the subject's, active, and approved by a reviewer (anything else
       the subject simply edits or deletes: their own word already wins).
    2. Its value becomes a ``pending_review`` candidate flagged ``contested``, carrying
       the fact's source and evidence and the subject's note.
    3. The fact leaves publication while it is contested, without suppressing its value:
       a reviewer's approval publishes it again, a rejection suppresses it for good.
    """
    _require_self(actor, user_id)
    row = Fact.objects.filter(tenant=tenant, pk=fact_id, subject__user_id=user_id).only("subject_id").first()
    if row is None:
        raise NotFound("Fact not found.")
    subject = lock_subject(row.subject_id)
    fact = Fact.objects.select_for_update().select_related("entity").get(pk=row.pk)
    if fact.status != FactStatus.ACTIVE:
        raise NotFound("Fact not found.")
    approver = Actor.parse(fact.approved_by)
    if approver is None or not approver.is_reviewer:
        raise InvalidTransition(
            "Only a fact a reviewer approved can be contested; edit or delete this one directly.",
            details={"approved_by": approver.kind if approver else ""},
        )
    note = (note or "").strip()[:MAX_NOTE_LENGTH]
    now = timezone.now()
    candidate = Candidate.objects.create(
        tenant=tenant,
        subject=subject,
        entity=fact.entity,
        entity_type=fact.entity.entity_type,
        entity_ref_id=fact.entity.entity_id,
        field=fact.field,
        value=fact.value,
        confidence=fact.confidence,
        kind=fact.kind,
        scope=fact.scope,
        thread_id=fact.thread_id,
        source=fact.source,
        source_message_id=fact.source_message_id,
        evidence=fact.evidence,
        status=CandidateStatus.PENDING_REVIEW,
        reason=Reason.NEEDS_REVIEW,
        note=note,
        flags=[CandidateFlag.CONTESTED],
        conflict_fact=fact,
    )
    audit.record_many(
        tenant.pk,
        [
            transitions.fact_contest(fact, subject=subject, actor=actor, candidate_id=candidate.pk, note=note, now=now),
            EventDraft.about(
                "candidate", candidate.pk, AuditAction.CANDIDATE_SUBMITTED, subject=subject, actor=actor,
                after={**candidate_payload(candidate), "flags": candidate.flags},
                reason_code=Reason.NEEDS_REVIEW,
            ),
        ],
    )
    schedule_projection(subject.pk)
    return candidate


# --- Another value of a many field -----------------------------------------------------------


@service
def fact_value_add(
    *, tenant: Tenant, user_id: Identifier, fact_id: int, value: Correction, actor: Actor,
    new_entity_type: Correction = "", new_entity_name: Correction = "",
) -> Candidate:
    """The subject adds a value to a ``many`` field they hold (another technology of a
    project, another preference); returns the candidate it became.

    1. The field is the one of the subject's fact ``fact_id``, and must be ``many`` (a
       ``one`` field is corrected, :func:`reviews.services.facts.fact_edit`).
    2. The value goes through the policy like any other (:func:`candidates_submit`, source
       ``self_service``): credentials, shape, duplicates and refusals apply as at the API.
    3. What the policy leaves for the subject (a sensitive field's consent) is theirs to
       confirm, and they just did: it is approved in their name. What it leaves for a
       reviewer stays with the reviewer.
    """
    _require_self(actor, user_id)
    fact = (
        Fact.objects.filter(tenant=tenant, pk=fact_id, subject__user_id=user_id, status=FactStatus.ACTIVE)
        .select_related("entity", "subject").first()
    )
    if fact is None:
        raise NotFound("Fact not found.")
    if fact.cardinality != Cardinality.MANY:
        raise InvalidInput("This kind of memory holds one value: correct it instead.", details={"cardinality": "one"})
    if fact.subject.collection_paused:
        raise InvalidTransition("Memory is paused: resume it to add something.")
    if fact.field.startswith(RELATION_PREFIX):
        value, _ = relation_target(subject=fact.subject, value=value, new_entity_type=new_entity_type,
                                   new_entity_name=new_entity_name)
    [result] = candidates_submit(
        tenant=tenant, user_id=user_id, source=Source.SELF_SERVICE, actor=actor,
        candidates=[CandidateInput(entity_type=fact.entity.entity_type, entity_id=fact.entity.entity_id,
                                   field=fact.field, value=clean_value(value), confidence=1.0,
                                   kind=Kind.RELATION if fact.field.startswith(RELATION_PREFIX) else Kind.FACT,
                                   scope=fact.scope, thread_id=fact.thread_id)],
    )
    candidate = Candidate.objects.get(pk=result.candidate_id)
    if candidate.status == CandidateStatus.PENDING_USER:
        candidate = candidate_approve(tenant=tenant, candidate_id=candidate.pk, version=candidate.version,
                                      actor=actor, user_id=user_id)
    if candidate.status == CandidateStatus.REJECTED:
        raise InvalidInput(ADD_REFUSALS.get(candidate.reason, ADD_REFUSED), details={"reason": candidate.reason})
    return candidate


ADD_REFUSED = "This value cannot be added."
ADD_REFUSALS = {
    Reason.SECRET_DETECTED: "The value looks like a credential; credentials are never stored.",
    Reason.SUPPRESSED: "You deleted this value before, so we do not keep it again.",
    Reason.INVALID: "The value cannot be empty.",
}


# --- Export ---------------------------------------------------------------------------------


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def _actor_kind(actor: str) -> str:
    """Who decided, without naming staff: ``subject``, ``reviewer``, ``policy``, ``api_key``…"""
    parsed = Actor.parse(actor)
    return parsed.kind if parsed else ""


@service
def subject_export(*, tenant: Tenant, user_id: Identifier, actor: Actor) -> dict:
    """Everything kept about one subject, as one JSON-serialisable document (SPEC §4).

    Every fact (any status) with all its versions, every candidate (the open ones also
    listed as ``pending_items``), every stored message, every entity and alias. Nothing of
    another subject: every query is keyed by this subject's row. The export is audited.
    Each kind of record has its one shape below (``_exported_*``).
    """
    _require_self(actor, user_id)
    subject = Subject.objects.filter(tenant=tenant, user_id=user_id).first()
    if subject is None:
        raise NotFound("Nothing is kept about this user.")
    versions: dict[int, list] = {}
    for version in FactVersion.objects.filter(fact__subject=subject).order_by("fact_id", "version"):
        versions.setdefault(version.fact_id, []).append(_exported_version(version))
    facts = Fact.objects.filter(subject=subject).select_related("entity").order_by("pk")
    candidates = [_exported_candidate(c) for c in Candidate.objects.filter(subject=subject).order_by("pk")]
    messages = [_exported_message(m) for m in Message.objects.filter(subject=subject).order_by("created_at", "pk")]
    document = {
        "format": EXPORT_FORMAT,
        "exported_at": _iso(timezone.now()),
        "tenant": tenant.slug,
        "user_id": subject.user_id,
        "collection_paused": subject.collection_paused,
        "entities": [
            _exported_entity(e)
            for e in Entity.objects.filter(subject=subject).prefetch_related("aliases").order_by("pk")
        ],
        "facts": [_exported_fact(f, versions.get(f.pk, [])) for f in facts],
        "pending_items": [c for c in candidates if c["status"] in OPEN_CANDIDATE_STATUSES],
        "candidates": candidates,
        "messages": messages,
    }
    audit.record(
        tenant.pk,
        EventDraft.about(
            "subject", subject.pk, AuditAction.SUBJECT_EXPORTED, subject=subject, actor=actor,
            after={
                "facts": len(document["facts"]),
                "candidates": len(candidates),
                "messages": len(messages),
            },
        ),
    )
    return document


def _exported_entity(entity: Entity) -> dict:
    return {
        "entity_type": entity.entity_type,
        "entity_id": entity.entity_id,
        "display_name": entity.display_name,
        "aliases": sorted(a.alias for a in entity.aliases.all()),
    }


def _exported_fact(fact: Fact, versions: list[dict]) -> dict:
    return {
        "id": fact.pk,
        "entity": f"{fact.entity.entity_type}:{fact.entity.entity_id}",
        "field": fact.field,
        "value": fact.value,
        "category": fact.category,
        "sensitivity": fact.sensitivity,
        "cardinality": fact.cardinality,
        "kind": fact.kind,
        "scope": fact.scope,
        "thread_id": fact.thread_id,
        "source": fact.source,
        "source_message_id": fact.source_message_id,
        "evidence": fact.evidence,
        "confidence": fact.confidence,
        "status": fact.status,
        "version": fact.version,
        "expires_at": _iso(fact.expires_at),
        "created_at": _iso(fact.created_at),
        "updated_at": _iso(fact.updated_at),
        "provenance": [
            {key: entry.get(key) for key in ("source", "source_message_id", "at")} for entry in fact.provenance
        ],
        "versions": versions,
    }


def _exported_version(version: FactVersion) -> dict:
    return {
        "version": version.version,
        "value": version.value,
        "confidence": version.confidence,
        "source": version.source,
        "source_message_id": version.source_message_id,
        "decided_by": _actor_kind(version.actor),
        "reason": version.reason,
        "created_at": _iso(version.created_at),
    }


def _exported_candidate(candidate: Candidate) -> dict:
    return {
        "id": candidate.pk,
        "entity": f"{candidate.entity_type}:{candidate.entity_ref_id}",
        "field": candidate.field,
        "value": candidate.value,
        "confidence": candidate.confidence,
        "kind": candidate.kind,
        "scope": candidate.scope,
        "thread_id": candidate.thread_id,
        "source": candidate.source,
        "source_message_id": candidate.source_message_id,
        "evidence": candidate.evidence,
        "status": candidate.status,
        "reason": candidate.reason,
        "note": candidate.note,
        "flags": candidate.flags,
        "conflict": candidate.has_conflict,
        "fact_id": candidate.fact_id,
        "decided_by": _actor_kind(candidate.decided_by),
        "decided_at": _iso(candidate.decided_at),
        "created_at": _iso(candidate.created_at),
    }


def _exported_message(message: Message) -> dict:
    return {
        "message_id": message.message_id,
        "thread_id": message.thread_id,
        "role": message.role,
        "content": message.content,
        "created_at": _iso(message.created_at),
    }
