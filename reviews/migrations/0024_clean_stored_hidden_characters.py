"""Hidden characters stored before the poisoning checks are removed (SPEC §3 "Poisoning").

Since the checks, the boundary removes format characters, bidirectional controls, tag
characters and variation-selector runs from every candidate's value and evidence, keeps the
original escaped (``Par⟨U+200B⟩is``) in ``flag_details`` and flags ``hidden_characters``.
Rows stored before that still hold them, and a published fact hands them to every agent
that recalls it. This gives those rows what new rows get:

- a candidate: value and evidence cleaned, the escaped originals in ``flag_details`` and the
  ``hidden_characters`` flag added; one ``candidate.cleaned`` event;
- a fact: value and evidence cleaned in place (the text a person sees does not change, so
  its version does not either), its versions' values too, the escaped original kept in its
  provenance, and the candidate that published it flagged as above; one ``fact.cleaned``
  event (host apps hear of it as ``fact.updated``). A value of a ``many`` field that, once
  clean, equals another active value of its slot is deleted, its event saying which fact
  holds the value now.

Events go on each row's tenant's chain, appended like any writer's (the chain head locked
last). The store projection follows with the hourly reconcile, or at once with
``manage.py publish --rebuild``. Rows are read through this migration's models and only the
columns it needs; with nothing to clean it writes nothing. Reversing does nothing: putting
hidden characters back is what this is for not to do.
"""
from django.db import migrations, transaction
from django.db.models import Q
from django.utils import timezone

# The boundary's own rules, not a copy: what counts as hidden, how it is written out, the
# value digest and the audit chain are each defined once (reviews/poisoning/characters.py,
# reviews/policy/normalize.py, reviews/audit.py). Their models are read through ``apps``.
from reviews import audit
from reviews.poisoning.characters import SUSPECT, escape_hidden, find_hidden
from reviews.policy.normalize import value_digest

ACTOR = "system:hidden_characters_cleanup"
FLAG = "hidden_characters"
REASON = "hidden characters stored before the poisoning checks were removed"
CHUNK = 500


def _clean(text):
    hidden = find_hidden(text or "")
    return (hidden.clean, escape_hidden(text)) if hidden.found else (text or "", "")


def _with_flag(candidate, escaped: dict) -> None:
    if FLAG not in (candidate.flags or []):
        candidate.flags = [*(candidate.flags or []), FLAG]
    candidate.flag_details = {**(candidate.flag_details or {}), **escaped}


def _suspect(model, *fields):
    """Rows of ``model`` with a character the boundary would remove in one of ``fields``:
    the database picks the suspects out by pattern (most rows have none), Python decides."""
    suspects = Q()
    for name in fields:
        suspects |= Q(**{f"{name}__regex": SUSPECT.pattern})
    rows = model.objects.filter(suspects).order_by("pk").values_list("pk", *fields)
    return [pk for pk, *texts in rows.iterator(chunk_size=CHUNK) if any(find_hidden(t or "").found for t in texts)]


def clean_candidates(apps, now, events) -> int:
    Candidate = apps.get_model("reviews", "Candidate")
    cleaned = 0
    for candidate in Candidate.objects.filter(pk__in=_suspect(Candidate, "value", "evidence")).select_related("subject"):
        escaped = {}
        for name in ("value", "evidence"):
            clean, shown = _clean(getattr(candidate, name))
            if shown:
                setattr(candidate, name, clean)
                escaped[name] = shown
        _with_flag(candidate, escaped)
        candidate.save(update_fields=["value", "evidence", "flags", "flag_details"])
        events.append((candidate.tenant_id, candidate.subject.user_id, "candidate.cleaned", "candidate", candidate.pk,
                       escaped, {"value": candidate.value, "evidence": candidate.evidence, "flags": candidate.flags}))
        cleaned += 1
    return cleaned


def clean_facts(apps, now, events) -> int:
    Fact = apps.get_model("reviews", "Fact")
    FactVersion = apps.get_model("reviews", "FactVersion")
    Candidate = apps.get_model("reviews", "Candidate")
    dirty_versions = set(_suspect(FactVersion, "value"))
    fact_ids = set(_suspect(Fact, "value", "evidence")) | set(
        FactVersion.objects.filter(pk__in=dirty_versions).values_list("fact_id", flat=True)
    )
    cleaned = 0
    for fact in Fact.objects.filter(pk__in=fact_ids).select_related("subject", "entity").order_by("pk"):
        escaped = {}
        for name in ("value", "evidence"):
            clean, shown = _clean(getattr(fact, name))
            if shown:
                setattr(fact, name, clean)
                escaped[name] = shown
        after = {"entity": f"{fact.entity.entity_type}:{fact.entity.entity_id}", "field": fact.field,
                 "value": fact.value, "version": fact.version, "flags": [FLAG]}
        if escaped:
            fact.value_digest = value_digest(fact.value)
            fact.provenance = [*(fact.provenance or []),
                               {"source": "cleanup", "actor": ACTOR, "at": now.isoformat(), "flags": [FLAG],
                                "escaped": escaped}]
            holder = None
            if fact.status == "active":
                holder = (
                    Fact.objects.filter(subject_id=fact.subject_id, entity_id=fact.entity_id, field=fact.field,
                                        thread_id=fact.thread_id, status="active", value_digest=fact.value_digest)
                    .exclude(pk=fact.pk).values_list("pk", flat=True).first()
                )
            if holder is not None:
                # Once clean it is the value another active fact holds: one of them goes.
                fact.status = "deleted"
                after.update(status="deleted", merged_into=holder)
            fact.save(update_fields=["value", "evidence", "value_digest", "provenance", "status"])
        for version in FactVersion.objects.filter(fact_id=fact.pk, pk__in=dirty_versions):
            version.value = _clean(version.value)[0]
            version.save(update_fields=["value"])
        # The candidate that published its current version: where a reviewer sees the flag.
        published_by = (
            FactVersion.objects.filter(fact_id=fact.pk, candidate__isnull=False).order_by("-version")
            .values_list("candidate_id", flat=True).first()
        )
        if published_by is not None and escaped:
            candidate = Candidate.objects.get(pk=published_by)
            _with_flag(candidate, escaped)
            candidate.save(update_fields=["flags", "flag_details"])
        events.append((fact.tenant_id, fact.subject.user_id, "fact.cleaned", "fact", fact.pk,
                       escaped or {"history": "earlier versions held hidden characters"}, after))
        cleaned += 1
    return cleaned


def _audit(events) -> None:
    """One event per row, on its tenant's chain."""
    by_tenant = {}
    for tenant_id, user_id, action, object_type, object_id, before, after in events:
        by_tenant.setdefault(tenant_id, []).append(audit.EventDraft(
            actor=ACTOR, action=action, object_type=object_type, object_id=object_id, subject_user_id=user_id,
            before=before, after=after, reason=REASON,
        ))
    for tenant_id in sorted(by_tenant):
        audit.record_many(tenant_id, by_tenant[tenant_id])


def clean_stored_hidden_characters(apps, schema_editor=None) -> dict:
    """What the migration runs; returns what it cleaned (the tests read it)."""
    now = timezone.now()
    events = []
    with transaction.atomic():
        counts = {"candidates": clean_candidates(apps, now, events), "facts": clean_facts(apps, now, events)}
        _audit(events)
    return counts


class Migration(migrations.Migration):

    dependencies = [
        ("reviews", "0023_review_decision_labels"),
    ]

    operations = [
        migrations.RunPython(clean_stored_hidden_characters, migrations.RunPython.noop, elidable=False),
    ]
