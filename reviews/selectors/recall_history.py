"""What was recalled, for auditors: recall records and the fact versions they returned."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from ..models import (
    Fact,
    FactStatus,
    FactVersion,
    RecallRecord,
    Tenant,
)

# Recall records, for auditors: newest first, keyset-paged on id.

RECALL_RECORDS_PAGE_SIZE = 50
RECALLS_OF_FACT_SQLITE_SCAN = 5000


@dataclass
class RecallRecordsPage:
    records: list[RecallRecord]
    next_before: int | None


def recall_records_page(
    *, tenant: Tenant, user_id: str = "", caller: str = "", before: int | None = None
) -> RecallRecordsPage:
    rows = RecallRecord.objects.filter(tenant=tenant).order_by("-id")
    if user_id:
        rows = rows.filter(user_id=user_id)
    if caller:
        rows = rows.filter(caller=caller)
    if before:
        rows = rows.filter(id__lt=before)
    page = list(rows[: RECALL_RECORDS_PAGE_SIZE + 1])
    more = len(page) > RECALL_RECORDS_PAGE_SIZE
    page = page[:RECALL_RECORDS_PAGE_SIZE]
    return RecallRecordsPage(page, page[-1].pk if more else None)


@dataclass
class RecalledVersion:
    """One fact of a recall record, at the version the caller received."""

    fact_id: int
    version: int
    fact: Fact | None
    value: str | None

    @property
    def still_current(self) -> bool:
        return self.fact is not None and self.fact.status == FactStatus.ACTIVE and self.fact.version == self.version


def recall_record_facts(record: RecallRecord) -> list[RecalledVersion]:
    """The value shown is the one of that version (from the fact's history); a fact
    erased since has neither fact nor value, and is listed by id and version only."""
    ids = {item["id"] for item in record.facts}
    facts = Fact.objects.filter(tenant_id=record.tenant_id, pk__in=ids).select_related("entity").in_bulk()
    versions = {
        (v.fact_id, v.version): v.value
        for v in FactVersion.objects.filter(fact_id__in=list(facts)).only("fact_id", "version", "value")
        if any(item["id"] == v.fact_id and item["version"] == v.version for item in record.facts)
    }
    return [
        RecalledVersion(item["id"], item["version"], facts.get(item["id"]), versions.get((item["id"], item["version"])))
        for item in record.facts
    ]


def recalls_of_fact(fact: Fact, *, limit: int = 100) -> list[RecallRecord]:
    """The latest recalls that returned ``fact``, newest first.

    PostgreSQL tests JSON containment in the database; SQLite has no such lookup, so a
    bounded number of the subject's latest records is scanned instead.
    """
    rows = RecallRecord.objects.filter(tenant_id=fact.tenant_id, user_id=fact.subject.user_id).order_by("-id")
    if connection.vendor == "postgresql":
        return list(rows.filter(facts__contains=[{"id": fact.pk}])[:limit])
    found = []
    for record in rows[:RECALLS_OF_FACT_SQLITE_SCAN].iterator():
        if any(item.get("id") == fact.pk for item in record.facts):
            found.append(record)
            if len(found) == limit:
                break
    return found
