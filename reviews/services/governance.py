"""Tenant governance (SPEC §4 tenant admin): the field schema, the policy (thresholds,
source priorities, retention) and the active extractor.

Every change here, whichever screen, command or API made it, is one audit event with
the values before and after: ``tenant.schema_changed``, ``tenant.policy_changed``,
``tenant.extractor_changed``. A change that changes nothing writes nothing.

Each ``*_check`` function validates a proposed change without writing, so a form (the
console's "what will change" step, the Django admin) can show the same domain error the
service would raise. API keys and staff live in :mod:`reviews.services.tenants`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from django.db.models import Count

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound
from ..extraction import active_extractor_name, prompt_versions
from ..models.tenancy import MAX_REVIEW_TARGET_HOURS
from ..models import (
    AuditAction,
    Cardinality,
    Category,
    EntityType,
    ExtractorName,
    Fact,
    FactStatus,
    FieldDefinition,
    Sensitivity,
    Source,
    Tenant,
)
from ..labels import LABEL_LANGUAGES, MAX_LABEL_LENGTH
from ..policy.pipeline import RELATION_PREFIX
from ..publication import schedule_projection
from ..secrets import mask_secrets
from .boundary import service
from ..screening import Screen, Text, Verbatim

# --- The field schema -------------------------------------------------------------------------

FIELD_ATTRIBUTES = ("cardinality", "sensitivity", "category", "auto_approve", "retention_days", "labels")
# What a published fact copies from its field's definition (recall filters on the copy).
FACT_SNAPSHOT_ATTRIBUTES = ("cardinality", "sensitivity", "category")
_FIELD_NAME = re.compile(rf"^(?:{re.escape(RELATION_PREFIX)})?[a-z][a-z0-9_]{{0,62}}$")
_RELATION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
MAX_RETENTION_DAYS = 36_500


def field_snapshot(definition: FieldDefinition) -> dict:
    return {
        "entity_type": definition.entity_type,
        "field": definition.field,
        **{name: getattr(definition, name) for name in FIELD_ATTRIBUTES},
    }


def _field_definition(tenant: Tenant, entity_type: str, field: str, *, lock: bool = False) -> FieldDefinition:
    rows = FieldDefinition.objects.filter(tenant=tenant, entity_type=entity_type, field=field)
    definition = (rows.select_for_update() if lock else rows).first()
    if definition is None:
        raise NotFound(
            f"The schema has no field {entity_type}.{field}.", details={"entity_type": entity_type, "field": field}
        )
    return definition


def clean_labels(labels) -> dict:
    """A label per language ({"en": …, "zh-hans": …}), trimmed; an empty one is left out
    (that language reads as the default label). Labels are shown on every page, so a
    credential is refused like anywhere else (SPEC §3 step 2)."""
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise InvalidInput("labels maps a language to its label.", details={"allowed": list(LABEL_LANGUAGES)})
    unknown = sorted(set(labels) - set(LABEL_LANGUAGES))
    if unknown:
        raise InvalidInput("Labels are written in English and Simplified Chinese only.",
                           details={"unknown": unknown, "allowed": list(LABEL_LANGUAGES)})
    cleaned = {}
    for language in LABEL_LANGUAGES:
        text = labels.get(language)
        if text is None:
            continue
        if not isinstance(text, str):
            raise InvalidInput("A label is text.", details={"language": language})
        text = " ".join(text.split())
        if len(text) > MAX_LABEL_LENGTH or any(ord(ch) < 32 for ch in text):
            raise InvalidInput(f"A label is at most {MAX_LABEL_LENGTH} printable characters.",
                               details={"language": language})
        if mask_secrets(text).found:
            raise InvalidInput("A label looks like a credential; credentials are never stored.",
                               details={"language": language, "value": "secret_detected"})
        if text:
            cleaned[language] = text
    return cleaned


def _check_field_attributes(values: Mapping) -> None:
    for name, vocabulary in (("cardinality", Cardinality), ("sensitivity", Sensitivity), ("category", Category)):
        if values[name] not in vocabulary.values:
            raise InvalidInput(f"Unknown {name}.", details={name: values[name], "allowed": list(vocabulary.values)})
    if not isinstance(values["auto_approve"], bool):
        raise InvalidInput("auto_approve is true or false.", details={"auto_approve": values["auto_approve"]})
    if values["auto_approve"] and values["sensitivity"] != Sensitivity.NORMAL:
        raise InvalidInput(
            "Auto-approval is allowed only on normal fields: turn it off before marking a field personal or sensitive.",
            details={"auto_approve": True, "sensitivity": values["sensitivity"]},
        )
    days = values["retention_days"]
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS):
        raise InvalidInput(
            f"Retention is a whole number of days from 1 to {MAX_RETENTION_DAYS}, or empty to keep until deleted.",
            details={"retention_days": days},
        )


def _active_facts(tenant: Tenant, entity_type: str, field: str):
    return Fact.objects.filter(
        tenant=tenant, entity__entity_type=entity_type, field=field, status=FactStatus.ACTIVE
    )


def field_add_check(*, tenant: Tenant, entity_type: str, field: str, attributes: Mapping) -> dict:
    """The new field's definition, validated; raises :class:`InvalidInput`."""
    if entity_type not in EntityType.values:
        raise InvalidInput(
            f"Unknown entity type; a field is for one of: {', '.join(EntityType.values)}.",
            details={"entity_type": entity_type, "allowed": list(EntityType.values)},
        )
    if not isinstance(field, str) or not _FIELD_NAME.match(field):
        raise InvalidInput(
            "A field name is lowercase letters, digits and _ (relations: relation:<name>).", details={"field": field}
        )
    unknown = sorted(set(attributes) - set(FIELD_ATTRIBUTES))
    if unknown:
        raise InvalidInput("Unknown field attributes.", details={"unknown": unknown, "allowed": list(FIELD_ATTRIBUTES)})
    sensitivity = attributes.get("sensitivity", Sensitivity.NORMAL)
    values = {
        "cardinality": attributes.get("cardinality", Cardinality.ONE),
        "sensitivity": sensitivity,
        "category": attributes.get("category", Category.IDENTITY),
        "auto_approve": attributes.get("auto_approve", False),
        "retention_days": attributes.get("retention_days"),
        "labels": clean_labels(attributes.get("labels")),
    }
    _check_field_attributes(values)
    if FieldDefinition.objects.filter(tenant=tenant, entity_type=entity_type, field=field).exists():
        raise InvalidInput(
            f"The schema already has {entity_type}.{field}.", details={"entity_type": entity_type, "field": field}
        )
    return {"entity_type": entity_type, "field": field, **values}


@service
def field_add(
    *,
    tenant: Tenant,
    entity_type: Text,
    field: Text,
    attributes: Annotated[Mapping, Screen.CORRECTION],
    actor: Actor,
) -> FieldDefinition:
    """Add a field to the tenant's schema; candidates for it are accepted from now on."""
    Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()
    values = field_add_check(tenant=tenant, entity_type=entity_type, field=field, attributes=attributes)
    definition = FieldDefinition.objects.create(tenant=tenant, **values)
    _record_schema_change(tenant, definition, before=None, after=field_snapshot(definition), actor=actor)
    return definition


@dataclass(frozen=True)
class FieldChange:
    """A checked change of one field: the definition before and after, and how many active
    facts carry a copy of what changes."""

    before: dict
    after: dict
    facts_affected: int

    @property
    def changed(self) -> dict:
        return {name: self.after[name] for name in FIELD_ATTRIBUTES if self.after[name] != self.before[name]}


def field_update_check(*, tenant: Tenant, entity_type: str, field: str, changes: Mapping) -> FieldChange:
    """What changing a field would do, validated; raises :class:`InvalidInput`/:class:`NotFound`.

    A ``one`` field may become ``many`` at any time. A ``many`` field may become ``one``
    only while no subject holds two active values of it: the database allows one active
    value per slot of a ``one`` field, and choosing which to drop is a reviewer's call.
    """
    unknown = sorted(set(changes) - set(FIELD_ATTRIBUTES))
    if unknown:
        raise InvalidInput("Unknown field attributes.", details={"unknown": unknown, "allowed": list(FIELD_ATTRIBUTES)})
    definition = _field_definition(tenant, entity_type, field)
    before = field_snapshot(definition)
    after = {**before, **changes}
    after["labels"] = clean_labels(after["labels"])
    _check_field_attributes(after)
    facts = _active_facts(tenant, entity_type, field)
    if before["cardinality"] == Cardinality.MANY and after["cardinality"] == Cardinality.ONE:
        crowded = (
            facts.values("subject_id", "entity_id", "thread_id").annotate(n=Count("id")).filter(n__gt=1).count()
        )
        if crowded:
            raise InvalidInput(
                f"{crowded} subject(s) hold several active values of {entity_type}.{field}; "
                "settle them to one each before making the field single-valued.",
                details={"cardinality": Cardinality.ONE, "slots_with_several_values": crowded},
            )
    snapshot_changes = any(after[name] != before[name] for name in FACT_SNAPSHOT_ATTRIBUTES)
    return FieldChange(before=before, after=after, facts_affected=facts.count() if snapshot_changes else 0)


@service
def field_update(
    *,
    tenant: Tenant,
    entity_type: Text,
    field: Text,
    changes: Annotated[Mapping, Screen.CORRECTION],
    actor: Actor,
) -> FieldDefinition:
    """Change a field's cardinality, sensitivity, category, auto-approval or retention.

    1. Lock the tenant, then check the change (see :func:`field_update_check`).
    2. Save the definition and give the field's active facts the new cardinality,
       sensitivity and category (recall and the Store read the copy on the fact, so a
       field made sensitive stops being recalled without the sensitive scope at once).
    3. Re-project the subjects concerned and record ``tenant.schema_changed``.
    Retention applies to values published from now on; published ones keep their expiry.
    """
    Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()
    change = field_update_check(tenant=tenant, entity_type=entity_type, field=field, changes=changes)
    if not change.changed:
        return _field_definition(tenant, entity_type, field)
    definition = _field_definition(tenant, entity_type, field, lock=True)
    for name, value in change.changed.items():
        setattr(definition, name, value)
    definition.save(update_fields=list(change.changed))
    snapshot = {name: change.after[name] for name in FACT_SNAPSHOT_ATTRIBUTES if name in change.changed}
    after = {**change.after}
    if snapshot:
        facts = _active_facts(tenant, entity_type, field)
        subject_ids = set(facts.values_list("subject_id", flat=True).distinct())
        after["facts_updated"] = Fact.objects.filter(pk__in=facts.values("pk")).update(**snapshot)
        for subject_id in sorted(subject_ids):
            schedule_projection(subject_id)
    _record_schema_change(tenant, definition, before=change.before, after=after, actor=actor)
    return definition


def _record_schema_change(tenant: Tenant, definition: FieldDefinition, *, before, after, actor: Actor) -> None:
    audit.record(
        tenant.pk,
        EventDraft(
            actor=str(actor),
            action=AuditAction.TENANT_SCHEMA_CHANGED,
            object_type="field",
            object_id=f"{definition.entity_type}.{definition.field}",
            before=before,
            after=after,
        ),
    )


def relation_labels_check(*, tenant: Tenant, name: str, labels: Mapping) -> tuple[dict, dict]:
    """A relation name's labels before and after, validated; raises :class:`InvalidInput`."""
    if not isinstance(name, str) or not _RELATION_NAME.match(name):
        raise InvalidInput("A relation name is lowercase letters, digits and _.", details={"name": name})
    allowed = tenant.allowed_relation_names
    if allowed is not None and name not in allowed:
        raise InvalidInput("The tenant's schema does not allow this relation name.",
                           details={"name": name, "allowed": list(allowed)})
    before = dict((tenant.relation_labels or {}).get(name) or {})
    return before, clean_labels(labels)


@service
def relation_labels_set(
    *,
    tenant: Tenant,
    name: Text,
    # Display labels: governance refuses one that holds a credential (mask_secrets).
    labels: Annotated[Mapping, Verbatim("checked by governance itself, which refuses a credential")],
    actor: Actor,
) -> Tenant:
    """Give a relation name (``relation:<name>``) its labels; empty ones read as the default.

    Recorded as ``tenant.schema_changed`` on ``relation:<name>``, like a field's labels.
    """
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    before, after = relation_labels_check(tenant=tenant, name=name, labels=labels)
    if before == after:
        return tenant
    relation_labels = {key: value for key, value in (tenant.relation_labels or {}).items() if key != name}
    if after:
        relation_labels[name] = after
    tenant.relation_labels = relation_labels
    tenant.save(update_fields=["relation_labels"])
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.TENANT_SCHEMA_CHANGED, object_type="relation",
                   object_id=f"{RELATION_PREFIX}{name}", before={"labels": before}, after={"labels": after}),
    )
    return tenant


# --- Policy: thresholds, source priorities, retention ----------------------------------------

THRESHOLDS = ("reject_below", "confirm_below", "auto_approve_at")
RETENTIONS = ("sensitive_retention_days", "message_retention_days", "thread_idle_days")
POLICY_SETTINGS = (
    *THRESHOLDS, "source_priority", "allowed_relation_names", *RETENTIONS, "reject_reasons", "review_target_hours"
)
# A reject reason is a short label a reviewer picks from a list, not a paragraph.
MAX_REJECT_REASONS, MAX_REJECT_REASON_LENGTH = 30, 120
SOURCE_PRIORITY_MAX = 100


def policy_snapshot(tenant: Tenant) -> dict:
    snapshot = {name: getattr(tenant, name) for name in POLICY_SETTINGS}
    snapshot["source_priority"] = {source: tenant.priority_of(source) for source in Source.values}
    return snapshot


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_thresholds(policy: dict) -> None:
    for name in THRESHOLDS:
        value = policy[name]
        if value is None and name == "auto_approve_at":
            continue
        if not _is_number(value) or not 0.0 <= value <= 1.0:
            raise InvalidInput(f"{name} is a number from 0 to 1.", details={name: value})
    if policy["reject_below"] > policy["confirm_below"]:
        raise InvalidInput(
            "reject_below must not exceed confirm_below: nothing could then wait for the subject's confirmation.",
            details={"reject_below": policy["reject_below"], "confirm_below": policy["confirm_below"]},
        )
    if policy["auto_approve_at"] is not None and policy["auto_approve_at"] < policy["confirm_below"]:
        raise InvalidInput(
            "auto_approve_at must not be below confirm_below (or empty: never auto-approve).",
            details={"auto_approve_at": policy["auto_approve_at"], "confirm_below": policy["confirm_below"]},
        )


def _check_source_priority(priority) -> None:
    if not isinstance(priority, Mapping):
        raise InvalidInput("source_priority maps each source to a number.", details={"allowed": list(Source.values)})
    unknown = sorted(set(priority) - set(Source.values))
    missing = sorted(set(Source.values) - set(priority))
    if unknown or missing:
        raise InvalidInput(
            "source_priority gives every source a rank, and only sources.",
            details={"unknown": unknown, "missing": missing},
        )
    bad = {source: rank for source, rank in priority.items()
           if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= SOURCE_PRIORITY_MAX}
    if bad:
        raise InvalidInput(
            f"A source's rank is a whole number from 0 to {SOURCE_PRIORITY_MAX}.", details={"source_priority": bad}
        )


def _check_reject_reasons(reasons) -> None:
    """The tenant's list of reject reasons: distinct, short, non-empty labels."""
    if (
        not isinstance(reasons, list)
        or len(reasons) > MAX_REJECT_REASONS
        or not all(isinstance(r, str) and r.strip() == r and 0 < len(r) <= MAX_REJECT_REASON_LENGTH for r in reasons)
        or len(set(reasons)) != len(reasons)
    ):
        raise InvalidInput(
            f"reject_reasons is a list of at most {MAX_REJECT_REASONS} distinct labels of 1 to "
            f"{MAX_REJECT_REASON_LENGTH} characters.",
            details={"reject_reasons": "invalid"},
        )


def _check_policy(policy: dict) -> None:
    _check_thresholds(policy)
    _check_source_priority(policy["source_priority"])
    names = policy["allowed_relation_names"]
    if names is not None and (
        not isinstance(names, list) or not all(isinstance(n, str) and _FIELD_NAME.match(n) for n in names)
    ):
        raise InvalidInput(
            "allowed_relation_names is a list of lowercase names, or empty for any.",
            details={"allowed_relation_names": names},
        )
    _check_reject_reasons(policy["reject_reasons"])
    target = policy["review_target_hours"]
    if isinstance(target, bool) or not isinstance(target, int) or not 1 <= target <= MAX_REVIEW_TARGET_HOURS:
        raise InvalidInput(
            f"review_target_hours is a whole number of hours from 1 to {MAX_REVIEW_TARGET_HOURS}.",
            details={"review_target_hours": target},
        )
    for name in RETENTIONS:
        days = policy[name]
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS:
            raise InvalidInput(f"{name} is a whole number of days from 1 to {MAX_RETENTION_DAYS}.", details={name: days})


@dataclass(frozen=True)
class PolicyChange:
    before: dict
    after: dict

    @property
    def changed(self) -> dict:
        return {name: self.after[name] for name in POLICY_SETTINGS if self.after[name] != self.before[name]}


def tenant_policy_check(*, tenant: Tenant, changes: Mapping) -> PolicyChange:
    """What changing the policy would do, validated; raises :class:`InvalidInput`."""
    unknown = sorted(set(changes) - set(POLICY_SETTINGS))
    if unknown:
        raise InvalidInput("Unknown policy settings.", details={"unknown": unknown, "allowed": list(POLICY_SETTINGS)})
    before = policy_snapshot(tenant)
    after = {**before, **changes}
    for name in THRESHOLDS:
        if _is_number(after[name]):
            after[name] = float(after[name])
    _check_policy(after)
    return PolicyChange(before=before, after=after)


@service
def tenant_policy_update(*, tenant: Tenant, changes: Annotated[Mapping, Screen.CORRECTION], actor: Actor) -> Tenant:
    """Change the tenant's thresholds, source priorities, relation names or retention
    (SPEC §3): they apply to every candidate the policy judges from the commit on."""
    tenant = Tenant.objects.select_for_update(no_key=True).get(pk=tenant.pk)
    change = tenant_policy_check(tenant=tenant, changes=changes)
    if not change.changed:
        return tenant
    for name, value in change.changed.items():
        setattr(tenant, name, value)
    tenant.save(update_fields=list(change.changed))
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.TENANT_POLICY_CHANGED, object_type="tenant",
                   object_id=tenant.pk, before=_only(change.before, change.changed), after=change.changed),
    )
    return tenant


def _only(values: dict, names) -> dict:
    return {name: values[name] for name in names}


# --- The active extractor and prompt version ---------------------------------------------------


def extractor_snapshot(tenant: Tenant) -> dict:
    return {"extractor": tenant.extractor, "prompt_version": tenant.prompt_version}


def tenant_extractor_check(*, tenant: Tenant, extractor: str, prompt_version: str) -> dict:
    """The extractor choice, validated: an empty extractor means the site's
    ``MEMORY_EXTRACTOR``, an empty prompt version the extractor's current one."""
    if extractor not in ("", *ExtractorName.values):
        raise InvalidInput("Unknown extractor.", details={"extractor": extractor, "allowed": list(ExtractorName.values)})
    probe = Tenant(extractor=extractor)
    known = prompt_versions(active_extractor_name(probe))
    if prompt_version and prompt_version not in known:
        raise InvalidInput(
            "That extractor has no such prompt version.",
            details={"prompt_version": prompt_version, "allowed": list(known)},
        )
    return {"extractor": extractor, "prompt_version": prompt_version}


@service
def tenant_extractor_set(*, tenant: Tenant, extractor: Text, prompt_version: Text, actor: Actor) -> Tenant:
    """Make an extractor and prompt version the tenant's active ones; messages extracted
    from the commit on use them."""
    tenant = Tenant.objects.select_for_update(no_key=True).get(pk=tenant.pk)
    after = tenant_extractor_check(tenant=tenant, extractor=extractor, prompt_version=prompt_version)
    before = extractor_snapshot(tenant)
    if after == before:
        return tenant
    tenant.extractor, tenant.prompt_version = after["extractor"], after["prompt_version"]
    tenant.save(update_fields=["extractor", "prompt_version"])
    audit.record(
        tenant.pk,
        EventDraft(actor=str(actor), action=AuditAction.TENANT_EXTRACTOR_CHANGED, object_type="tenant",
                   object_id=tenant.pk, before=before, after=after),
    )
    return tenant
