"""Subjects and entity resolution (SPEC §1).

Resolution normalises a name (NFKC, case-fold, trimmed whitespace) and maps it through the
subject's aliases to a stable entity id. The subject's own ``user`` entity answers to
their user id and to 我 / I / me / my.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import audit
from ..policy import transitions
from ..actors import Actor
from ..domain import SELF_ALIASES
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound
from ..models import (
    AuditAction,
    Candidate,
    Cardinality,
    Entity,
    EntityAlias,
    Fact,
    FactStatus,
    Reason,
    Subject,
    SuppressedValue,
    Tenant,
)
from ..policy.normalize import normalize_text, slugify_entity_id, value_digests
from ..extraction.resolve import canonical_entity_id
from ..publication import schedule_projection
from .boundary import service
from ..models.locks import lock_subject

USER_ENTITY_TYPE = "user"


def subject_get_or_create(*, tenant: Tenant, user_id: str) -> Subject:
    subject = Subject.objects.filter(tenant=tenant, user_id=user_id).first()
    if subject is not None:
        return subject
    try:
        with transaction.atomic():
            return Subject.objects.create(tenant=tenant, user_id=user_id)
    except IntegrityError:  # created concurrently
        return Subject.objects.get(tenant=tenant, user_id=user_id)


class EntityResolver:
    """Resolves (type, id-or-name) to an Entity within one subject, caching per batch."""

    def __init__(self, subject: Subject):
        self.subject = subject
        self._cache: dict[tuple[str, str], Entity] = {}

    def resolve(self, *, entity_type: str, entity_id: str, entity_name: str = "") -> Entity:
        entity_type = normalize_text(entity_type)
        if entity_type == USER_ENTITY_TYPE:
            return self._user_entity()
        key = (entity_type, normalize_text(entity_id or entity_name))
        if key not in self._cache:
            self._cache[key] = self._find(entity_type, entity_id, entity_name) or self._create(
                entity_type, entity_id, entity_name
            )
        return self._cache[key]

    def _user_entity(self) -> Entity:
        key = (USER_ENTITY_TYPE, "")
        if key not in self._cache:
            subject = self.subject
            entity = Entity.objects.filter(subject=subject, entity_type=USER_ENTITY_TYPE).first()
            if entity is None:
                entity = self._create(USER_ENTITY_TYPE, subject.user_id, "", extra_aliases=SELF_ALIASES)
            self._cache[key] = entity
        return self._cache[key]

    def _find(self, entity_type: str, entity_id: str, entity_name: str) -> Entity | None:
        given = [name for name in (entity_id, entity_name) if name]
        slug = slugify_entity_id(entity_id or entity_name)
        # The id as given first, then the canonical ids of every name given ("Flask 迁移项目"
        # and "the Flask migration project" are both project:flask-migration).
        slugs = [slug, *(canonical_entity_id(entity_type, name) for name in given)]
        found = {
            e.entity_id: e for e in Entity.objects.filter(subject=self.subject, entity_type=entity_type, entity_id__in=slugs)
        }
        entity = next((found[s] for s in slugs if s in found), None)
        if entity is None:
            names = {normalize_text(name) for name in given}
            alias = (
                EntityAlias.objects.filter(subject=self.subject, entity__entity_type=entity_type, normalized__in=names)
                .select_related("entity")
                .first()
            )
            entity = alias.entity if alias else None
        if entity is not None and entity_name:
            # Reached by one name, known from now on by this one too.
            alias_add(entity=entity, names=[entity_name])
        return entity

    def _create(self, entity_type: str, entity_id: str, entity_name: str, extra_aliases=()) -> Entity:
        given = entity_id or entity_name
        slug = slugify_entity_id(given)
        if slug != given:
            # A display name where an id belongs ("Flask 迁移项目"): use the id its other names reach.
            slug = canonical_entity_id(entity_type, given)
        try:
            with transaction.atomic():
                entity = Entity.objects.create(
                    tenant_id=self.subject.tenant_id,
                    subject=self.subject,
                    entity_type=entity_type,
                    entity_id=slug,
                    display_name=(entity_name or entity_id)[:200],
                    is_new=entity_type != USER_ENTITY_TYPE,
                )
        except IntegrityError:
            return Entity.objects.get(subject=self.subject, entity_type=entity_type, entity_id=slug)
        alias_add(entity=entity, names=[entity_name, entity_id, *extra_aliases])
        return entity


def alias_add(*, entity: Entity, names) -> None:
    rows = {}
    for name in names:
        normalized = normalize_text(name or "")
        if normalized and normalized not in rows:
            rows[normalized] = EntityAlias(
                tenant_id=entity.tenant_id,
                subject_id=entity.subject_id,
                entity=entity,
                alias=name.strip()[:200],
                normalized=normalized[:200],
            )
    EntityAlias.objects.bulk_create(rows.values(), ignore_conflicts=True)


@service
def entity_merge(*, tenant: Tenant, source_id: int, target_id: int, actor: Actor) -> Entity:
    """Merge entity ``source`` into ``target`` of the same subject (SPEC §1).

    1. Lock both; they must belong to the tenant, the same subject and the same type.
    2. Move aliases, candidates, facts and suppressed digests. Every fact moves: one that
       would duplicate or contradict the target's active value is retired first (deleted,
       its value kept in its versions as history, ``fact.retired``), never removed.
    3. Delete the source (nothing cascades from it any more) and audit the merge.
    """
    entities = {e.pk: e for e in Entity.objects.filter(tenant=tenant, pk__in=[source_id, target_id])}
    source, target = entities.get(source_id), entities.get(target_id)
    if source is None or target is None:
        raise NotFound("Entity not found.")
    lock_subject(target.subject_id)  # the subject first, as every writer does: no deadlocks
    if source.pk == target.pk or source.subject_id != target.subject_id or source.entity_type != target.entity_type:
        raise InvalidInput("Only two different entities of the same subject and type can be merged.")
    existing_aliases = set(target.aliases.values_list("normalized", flat=True))
    moved_aliases = [a.alias for a in source.aliases.all() if a.normalized not in existing_aliases]
    alias_add(entity=target, names=[*moved_aliases, source.display_name, source.entity_id])
    Candidate.objects.filter(entity=source).update(entity=target, entity_ref_id=target.entity_id)
    # Facts move unless the target already has the same active value (then the source's
    # copy is retired rather than creating a duplicate the constraint would refuse).
    target_active = Fact.objects.filter(entity=target, status=FactStatus.ACTIVE)
    target_digests = set(target_active.values_list("field", "thread_id", "value_digest"))
    target_one_fields = set(target_active.filter(cardinality=Cardinality.ONE).values_list("field", "thread_id"))
    facts = list(Fact.objects.select_for_update().filter(entity=source).select_related("entity").order_by("pk"))
    retired = [
        fact
        for fact in facts
        if fact.status == FactStatus.ACTIVE
        and (
            # Either side's digest may predate the current key: compare under every key.
            any((fact.field, fact.thread_id, digest) in target_digests for digest in value_digests(fact.value))
            or (fact.cardinality == Cardinality.ONE and (fact.field, fact.thread_id) in target_one_fields)
        )
    ]
    subject = target.subject
    events = transitions.facts_end(
        retired,
        transitions.FACT_RETIRE,
        subject=subject,
        actor=actor,
        at=timezone.now(),
        reason_code=lambda _fact: Reason.ENTITY_MERGED,
    )
    # A deleted fact shows no value; the retired value stays in the fact's versions.
    Fact.objects.filter(pk__in=[fact.pk for fact in retired]).update(value="", evidence="")
    Fact.objects.filter(pk__in=[fact.pk for fact in facts]).update(entity=target)
    moved = [fact.pk for fact in facts]
    for row in SuppressedValue.objects.filter(entity=source):
        SuppressedValue.objects.get_or_create(
            tenant_id=row.tenant_id, subject_id=row.subject_id, entity=target, field=row.field, value_digest=row.value_digest
        )
    before = {
        "source": source.ref,
        "target": target.ref,
        "moved_facts": moved,
        "retired_facts": [fact.pk for fact in retired],
    }
    source.delete()
    events.append(
        EventDraft.about(
            "entity", target.pk, AuditAction.ENTITY_MERGED, subject=subject, actor=actor,
            before=before,
            after={"entity": target.ref, "aliases": sorted(target.aliases.values_list("alias", flat=True))},
        )
    )
    audit.record_many(tenant.pk, events)
    schedule_projection(target.subject_id)
    return target
