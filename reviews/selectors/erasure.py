"""What a deletion by thread, entity or field reaches: the scope the erasure service works on
and the confirmation pages preview, read before anything is removed."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from ..errors import InvalidInput, NotFound
from ..models import Candidate, Entity, Fact, Message, Subject
from ..policy.normalize import normalize_text


def parse_entity_ref(entity: str) -> tuple[str, str]:
    entity_type, sep, entity_id = (entity or "").partition(":")
    entity_type, entity_id = normalize_text(entity_type), entity_id.strip()
    if not sep or not entity_type or not entity_id:
        raise InvalidInput("An entity is written type:id, e.g. project:flask-migration.", details={"entity": entity})
    return entity_type, entity_id


@dataclass
class DeletionScope:
    """What a deletion by thread, entity and/or field reaches in one subject's memory."""

    facts: Q
    candidates: Q
    messages: QuerySet | None  # deleted outright: a thread on its own
    message_ids: list[str]  # the thread's, whose facts and versions go with it
    entity: Entity | None


def deletion_scope(
    subject: Subject, *, thread_id: str | None = None, entity: str | None = None, field: str | None = None
) -> DeletionScope:
    """The scope of :func:`facts_delete` (also what a confirmation page previews).

    A thread is its thread-scoped facts and candidates plus what its messages were the
    source of; filters combine. A thread, entity or field the subject never had is not
    found (404), whoever else it may belong to.
    """
    facts, candidates = Q(subject=subject), Q(subject=subject)
    target = None
    if entity:
        entity_type, entity_ref = parse_entity_ref(entity)
        target = Entity.objects.filter(subject=subject, entity_type=entity_type, entity_id=entity_ref).first()
        if target is None:
            raise NotFound("No such entity in this user's memory.", details={"entity": entity})
        facts &= Q(entity=target)
        candidates &= Q(entity=target) | Q(entity_type=entity_type, entity_ref_id=entity_ref)
    if field:
        known = Fact.objects.filter(subject=subject, field=field).exists() or (
            Candidate.objects.filter(subject=subject, field=field).exists()
        )
        if not known:
            raise NotFound("No such field in this user's memory.", details={"field": field})
        facts &= Q(field=field)
        candidates &= Q(field=field)
    thread_messages, message_ids = None, []
    if thread_id:
        thread_messages = Message.objects.filter(subject=subject, thread_id=thread_id)
        message_ids = list(thread_messages.values_list("message_id", flat=True))
        in_thread = Q(thread_id=thread_id) | Q(source_message_id__in=message_ids)
        known = (
            bool(message_ids)
            or Fact.objects.filter(Q(subject=subject) & in_thread).exists()
            or Candidate.objects.filter(Q(subject=subject) & in_thread).exists()
        )
        if not known:
            raise NotFound("No such conversation in this user's memory.", details={"thread_id": thread_id})
        facts &= in_thread
        candidates &= in_thread
    return DeletionScope(
        facts=facts,
        candidates=candidates,
        messages=thread_messages if thread_id and not (entity or field) else None,
        message_ids=message_ids,
        entity=target,
    )
