"""Reads of one subject's whole memory for the admin API (SPEC §7 `GET /users/{id}/facts`)."""
from __future__ import annotations

from django.db.models import Count, F, Max, Min, Prefetch

from ..errors import NotFound
from ..models import Fact, FactStatus, FactVersion, Subject, Tenant


def subject_facts_with_history(*, tenant: Tenant, user_id: str) -> list[Fact]:
    """Every fact of the subject (active, expired and deleted tombstones), each with its
    versions oldest first in ``fact.history``; two queries however many facts."""
    subject = Subject.objects.filter(tenant=tenant, user_id=user_id).first()
    if subject is None:
        raise NotFound("No memory for this user.")
    versions = Prefetch("versions", queryset=FactVersion.objects.order_by("version"), to_attr="history")
    return list(
        Fact.objects.filter(subject=subject)
        .select_related("entity")
        .prefetch_related(versions)
        .order_by("entity__entity_type", "entity__entity_id", "field", "pk")
    )


def published_fact_locate(*, tenant: Tenant, fact_id: int) -> Fact:
    """A published (active) fact of the tenant by id, with its subject and entity; 404
    for anything else, another tenant's fact included."""
    fact = (
        Fact.objects.filter(tenant=tenant, pk=fact_id, status=FactStatus.ACTIVE)
        .select_related("subject", "entity")
        .first()
    )
    if fact is None:
        raise NotFound("No such memory.")
    return fact


def subjects_with_published_facts(*, tenant: Tenant, limit: int) -> list[dict]:
    """The tenant's subjects that have active facts, with how many, most recent first."""
    return list(
        Fact.objects.filter(tenant=tenant, status=FactStatus.ACTIVE)
        .values(user_id=F("subject__user_id"))
        .annotate(total=Count("pk"), created_at=Min("created_at"), updated_at=Max("updated_at"))
        .order_by("-updated_at", "user_id")[:limit]
    )
