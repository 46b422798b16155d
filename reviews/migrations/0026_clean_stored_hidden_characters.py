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
  clean, equals another active value of its slot leaves publication as an entity merge's
  clash does (``fact.retired``, through reviews/policy/transitions.py, its value kept in its
  versions), its ``fact.cleaned`` event naming the fact that holds the value.

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
# value digest, the status transitions and the audit chain are each defined once
# (reviews/poisoning/characters.py, reviews/policy/normalize.py, reviews/policy/transitions.py,
# reviews/audit.py). The rows cleaned are read through ``apps``; the one transition, a rare
# clash, goes through the live models the transitions module works on.
from reviews import audit, models as live
from reviews.actors import Actor
from reviews.models.choices import ActorKind, AuditAction, CandidateFlag, FactStatus, Reason
from reviews.models.locks import lock_subjects
from reviews.poisoning.characters import SUSPECT, escape_hidden, find_hidden
from reviews.policy import transitions
from reviews.policy.normalize import value_digest

ACTOR = Actor(ActorKind.SYSTEM, "hidden_characters_cleanup")
FLAG = CandidateFlag.HIDDEN_CHARACTERS
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


def clean_candidates(apps, now, events, ids) -> int:
    Candidate = apps.get_model("reviews", "Candidate")
    cleaned = 0
    for candidate in Candidate.objects.filter(pk__in=ids).select_related("subject").order_by("pk"):
        escaped = {}
        for name in ("value", "evidence"):
            clean, shown = _clean(getattr(candidate, name))
            if shown:
                setattr(candidate, name, clean)
                escaped[name] = shown
        _with_flag(candidate, escaped)
        candidate.save(update_fields=["value", "evidence", "flags", "flag_details"])
        after = {"value": candidate.value, "evidence": candidate.evidence, "flags": candidate.flags}
        events.append((candidate.tenant_id, candidate.subject.user_id, AuditAction.CANDIDATE_CLEANED, "candidate",
                       candidate.pk, escaped, after))
        cleaned += 1
    return cleaned


def clean_facts(apps, now, events, retired, fact_ids, dirty_versions) -> int:
    Fact = apps.get_model("reviews", "Fact")
    FactVersion = apps.get_model("reviews", "FactVersion")
    Candidate = apps.get_model("reviews", "Candidate")
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
                               {"source": "cleanup", "actor": str(ACTOR), "at": now.isoformat(), "flags": [FLAG],
                                "escaped": escaped}]
            holder = None
            if fact.status == FactStatus.ACTIVE:
                holder = (
                    Fact.objects.filter(subject_id=fact.subject_id, entity_id=fact.entity_id, field=fact.field,
                                        thread_id=fact.thread_id, status=FactStatus.ACTIVE,
                                        value_digest=fact.value_digest)
                    .exclude(pk=fact.pk).values_list("pk", flat=True).first()
                )
            if holder is not None:
                # Once clean it is the value another active fact holds: this one leaves
                # publication first (the constraint allows one active row per value).
                after["merged_into"] = holder
                retired += retire_clash(fact.pk, now)
                fact.value, fact.evidence = "", ""
            fact.save(update_fields=["value", "evidence", "value_digest", "provenance"])
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
        events.append((fact.tenant_id, fact.subject.user_id, AuditAction.FACT_CLEANED, "fact", fact.pk,
                       escaped or {"history": "earlier versions held hidden characters"}, after))
        cleaned += 1
    return cleaned


def retire_clash(fact_id, now) -> list:
    """A fact whose clean value another active fact of its slot holds leaves publication the
    way an entity merge's clash does: retired, its value kept in its versions only."""
    fact = live.Fact.objects.select_related("subject", "entity").get(pk=fact_id)
    return transitions.facts_end([fact], transitions.FACT_RETIRE, subject=fact.subject, actor=ACTOR, at=now,
                                 reason=REASON, reason_code=lambda _fact: Reason.DUPLICATE)


def _audit(events, retired) -> None:
    """One event per row (and one per clash retired), on its tenant's chain."""
    by_tenant = {}
    for tenant_id, user_id, action, object_type, object_id, before, after in events:
        by_tenant.setdefault(tenant_id, []).append(audit.EventDraft(
            actor=str(ACTOR), action=action, object_type=object_type, object_id=object_id, subject_user_id=user_id,
            before=before, after=after, reason=REASON,
        ))
    tenants = dict(live.Fact.objects.filter(pk__in=[int(d.object_id) for d in retired]).values_list("pk", "tenant_id"))
    for draft in retired:
        by_tenant.setdefault(tenants[int(draft.object_id)], []).append(draft)
    for tenant_id in sorted(by_tenant):
        audit.record_many(tenant_id, by_tenant[tenant_id])


def clean_stored_hidden_characters(apps, schema_editor=None) -> dict:
    """What the migration runs; returns what it cleaned (the tests read it)."""
    Candidate, Fact, FactVersion = (apps.get_model("reviews", name) for name in ("Candidate", "Fact", "FactVersion"))
    now = timezone.now()
    events, retired = [], []
    with transaction.atomic():
        candidate_ids = _suspect(Candidate, "value", "evidence")
        dirty_versions = set(_suspect(FactVersion, "value"))
        fact_ids = set(_suspect(Fact, "value", "evidence")) | set(
            FactVersion.objects.filter(pk__in=dirty_versions).values_list("fact_id", flat=True)
        )
        # Every writer's lock order (reviews/models/locks.py): the subjects first, ascending;
        # the chain heads last, when the events are appended.
        lock_subjects({*Candidate.objects.filter(pk__in=candidate_ids).values_list("subject_id", flat=True),
                       *Fact.objects.filter(pk__in=fact_ids).values_list("subject_id", flat=True)})
        counts = {
            "candidates": clean_candidates(apps, now, events, candidate_ids),
            "facts": clean_facts(apps, now, events, retired, fact_ids, dirty_versions),
        }
        _audit(events, retired)
    return counts


class Migration(migrations.Migration):

    dependencies = [
        ("reviews", "0025_candidate_comments"),
    ]

    operations = [
        migrations.RunPython(clean_stored_hidden_characters, migrations.RunPython.noop, elidable=False),
    ]
