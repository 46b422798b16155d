"""Extraction dry run (SPEC §4): replay a tenant's stored messages through another extractor
or prompt version, write no candidate, fact, entity or message, and say what would change.

1. Read the tenant's user messages of the last ``days`` (the newest ``limit`` of them),
   oldest first, each with the context the pipeline would give it (its thread, the
   subject's known entities): the extraction itself reads only.
2. Compare what the extractor proposes with what exists for the same messages and
   subjects, by (subject, entity, field, normalised value):
   - *re-proposed*: a value people or the policy approved (an approved candidate of these
     messages, or an active fact) that the new extractor proposes again;
   - *missed*: an approved candidate of these messages it does not propose;
   - *new*: anything else it proposes; *refused* of them: values whose fingerprint the
     subject or a reviewer rejected or deleted (the suppression digests).
3. Keep the figures and a few examples of each as an :class:`ExtractionDryRun` report, and
   one audit event saying who ran it (the only writes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Annotated

from django.utils import timezone

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput
from ..extraction import ExtractionError, Extractor
from ..extraction.resolve import canonical_entity_id
from ..models import (
    AuditAction,
    Candidate,
    CandidateStatus,
    DryRunGroup,
    Entity,
    ExtractionDryRun,
    Fact,
    FactStatus,
    Message,
    SuppressedValue,
    Tenant,
)
from ..policy.normalize import value_digest, value_digests
from .entities import USER_ENTITY_TYPE
from .ingest import extraction_context_build
from .boundary import service
from ..screening import Screen

EXAMPLES_PER_GROUP = 5
MAX_DAYS = 365
MAX_MESSAGES = 5000
DEFAULT_MESSAGES = 500
APPROVED = (CandidateStatus.APPROVED, CandidateStatus.AUTO_APPROVED, CandidateStatus.MERGED)

# (subject pk, entity_type, entity id, field, value digest): a value in one subject's memory.
Key = tuple[int, str, str, str, str]


@dataclass
class _Tally:
    messages: int = 0
    failures: int = 0
    proposed: int = 0
    keys: dict[Key, dict] = field(default_factory=dict)


def extraction_dry_run(
    *,
    tenant: Tenant,
    extractor: Extractor,
    actor: Actor,
    days: int = 30,
    limit: int | None = None,
    now: datetime | None = None,
) -> ExtractionDryRun:
    """Replay and compare (see the module's steps); returns the kept report."""
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput("days lies between 1 and 365.", details={"days": days})
    if limit is not None and not 1 <= limit <= MAX_MESSAGES:
        raise InvalidInput(f"limit lies between 1 and {MAX_MESSAGES}.", details={"limit": limit})
    now = now or timezone.now()
    messages = _messages(tenant, since=now - timedelta(days=days), limit=limit or DEFAULT_MESSAGES)
    proposed = _replay(messages, extractor)
    figures, examples = _compare(tenant, messages, proposed)
    return _keep(tenant, extractor, actor, days, limit, figures, examples)


def _messages(tenant: Tenant, *, since: datetime, limit: int) -> list[Message]:
    newest = list(
        Message.objects.select_related("subject__tenant")
        .filter(tenant=tenant, role="user", created_at__gte=since)
        .order_by("-created_at", "-pk")[:limit]
    )
    return newest[::-1]


def _replay(messages: list[Message], extractor: Extractor) -> _Tally:
    tally = _Tally()
    with_fields = getattr(extractor, "reads_fields", True)
    for message in messages:
        tally.messages += 1
        try:
            result = extractor.extract(extraction_context_build(message, with_fields=with_fields))
        except ExtractionError:
            tally.failures += 1
            continue
        for item in result.candidates:
            tally.proposed += 1
            entity_id = message.subject.user_id if item.entity_type == USER_ENTITY_TYPE else item.entity_id
            key = (message.subject_id, item.entity_type, canonical_entity_id(item.entity_type, entity_id)
                   if item.entity_type != USER_ENTITY_TYPE else entity_id, item.field, value_digest(item.value))
            tally.keys.setdefault(key, {"user_id": message.subject.user_id, "message_id": message.message_id,
                                        "entity": f"{item.entity_type}:{entity_id}", "field": item.field,
                                        "value": item.value})
    return tally


def _compare(tenant: Tenant, messages: list[Message], tally: _Tally) -> tuple[dict, dict]:
    subjects = {message.subject_id for message in messages}
    message_ids = [message.message_id for message in messages]
    approved: dict[Key, dict] = {}
    for candidate in Candidate.objects.filter(
        tenant=tenant, subject_id__in=subjects, source_message_id__in=message_ids, status__in=APPROVED
    ).select_related("subject"):
        key = (candidate.subject_id, candidate.entity_type, candidate.entity_ref_id, candidate.field,
               value_digest(candidate.value))
        approved.setdefault(key, {"user_id": candidate.subject.user_id, "message_id": candidate.source_message_id,
                                  "entity": f"{candidate.entity_type}:{candidate.entity_ref_id}",
                                  "field": candidate.field, "value": candidate.value})
    active = set(
        Fact.objects.filter(tenant=tenant, subject_id__in=subjects, status=FactStatus.ACTIVE).values_list(
            "subject_id", "entity__entity_type", "entity__entity_id", "field", "value_digest"
        )
    )
    entity_ids = {
        (subject_id, entity_type, entity_id): pk
        for pk, subject_id, entity_type, entity_id in Entity.objects.filter(subject_id__in=subjects).values_list(
            "pk", "subject_id", "entity_type", "entity_id"
        )
    }
    refused = set(
        SuppressedValue.objects.filter(subject_id__in=subjects).values_list("entity_id", "field", "value_digest")
    )
    groups: dict[DryRunGroup, list[dict]] = {group: [] for group in DryRunGroup}
    for key, example in tally.keys.items():
        # Stored digests may predate the current key (MEMORY_DIGEST_OLD_KEYS): match under each.
        digests = value_digests(example["value"])
        if key in approved or any((*key[:4], digest) in active for digest in digests):
            groups[DryRunGroup.RE_PROPOSED].append(example)
            continue
        groups[DryRunGroup.NEW].append(example)
        entity_pk = entity_ids.get(key[:3])
        if entity_pk is not None and any((entity_pk, key[3], digest) in refused for digest in digests):
            groups[DryRunGroup.REFUSED].append(example)
    groups[DryRunGroup.MISSED] = [example for key, example in approved.items() if key not in tally.keys]
    figures = {
        "messages": tally.messages,
        "failures": tally.failures,
        "proposed": tally.proposed,
        "approved_before": len(approved),
        **{group: len(items) for group, items in groups.items()},
    }
    return figures, {group: items[:EXAMPLES_PER_GROUP] for group, items in groups.items()}


@service
def _keep(
    tenant: Tenant,
    extractor: Extractor,
    actor: Actor,
    days: int,
    limit: int | None,
    figures: Annotated[dict, Screen.TEXT],
    examples: Annotated[dict, Screen.TEXT],
) -> ExtractionDryRun:
    report = ExtractionDryRun.objects.create(
        tenant=tenant,
        requested_by=str(actor),
        extractor=extractor.name[:64],
        prompt_version=extractor.prompt_version[:32],
        days=days,
        message_limit=limit,
        figures=figures,
        examples=examples,
    )
    audit.record(
        tenant.pk,
        EventDraft(
            actor=str(actor),
            action=AuditAction.EXTRACTION_DRY_RUN,
            object_type="extraction_dry_run",
            object_id=report.pk,
            # Counts only: the examples stay in the report.
            after={"extractor": report.extractor, "prompt_version": report.prompt_version, "days": days,
                   "limit": limit, **figures},
        ),
    )
    return report


def dry_run_examples_forget(*, tenant_id: int, user_id: str, pattern=None) -> int:
    """Erasure reaches the kept reports: drop one subject's examples, all of them (``pattern``
    None: the subject is forgotten) or those whose value the deleted values' pattern finds.

    The figures stay (counts name nobody); only the examples quote values. Returns how many
    examples went. Runs inside the erasure's transaction, reports locked while rewritten.
    """
    removed = 0
    for report in ExtractionDryRun.objects.select_for_update().filter(tenant_id=tenant_id):
        kept = {}
        for group, items in (report.examples or {}).items():
            kept[group] = [
                item
                for item in items
                if item.get("user_id") != user_id
                or (pattern is not None and not pattern.search(str(item.get("value", ""))))
            ]
            removed += len(items) - len(kept[group])
        if kept != report.examples:
            report.examples = kept
            report.save(update_fields=["examples"])
    return removed

