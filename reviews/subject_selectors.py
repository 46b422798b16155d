"""Reads of one subject's whole memory for the admin API (SPEC §7 `GET /users/{id}/facts`)."""
from __future__ import annotations

from django.db.models import Prefetch

from .errors import NotFound
from .models import Fact, FactVersion, Subject, Tenant


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
