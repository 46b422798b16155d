"""Reading a tenant's audit trail a page at a time, newest first (SPEC §7
``GET /api/v1/audit/events``). Rows have the export's shape (:func:`exports.export_row`):
what the hash covers, the readable values while they exist, and the links."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from ..errors import InvalidInput
from ..exports import ExportFilters, event_rows
from ..models import AuditEvent, Tenant

AUDIT_PAGE_SIZE = 50
AUDIT_MAX_PAGE_SIZE = 200


@dataclass(frozen=True)
class AuditCursor:
    """Where the previous page stopped: the sequence number of its last (oldest) event."""

    seq: int

    def encode(self) -> str:
        return base64.urlsafe_b64encode(f"seq.{self.seq}".encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> "AuditCursor":
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            label, _, seq = raw.partition(".")
            # Only what encode() writes: int() alone would also take " 7", "+7" and "1_000".
            if not (seq.isascii() and seq.isdigit()):
                raise ValueError(seq)
            cursor = cls(int(seq))
        except (ValueError, UnicodeDecodeError, binascii.Error):
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"}) from None
        if label != "seq" or cursor.seq < 1:
            raise InvalidInput("The cursor is not valid.", details={"cursor": "invalid"})
        return cursor


def changed_values(before, after) -> list[tuple[str, object, object]]:
    """An event's change as before → after, one line a key that differs, when both sides are
    records (a key only one side has reads as None on the other); [] otherwise (a page then
    shows each side whole). The audit log and an item's history read changes this way."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    keys = list(dict.fromkeys([*before, *after]))
    return [(key, before.get(key), after.get(key)) for key in keys if before.get(key) != after.get(key)]


@dataclass
class AuditEventsPage:
    rows: list[dict]
    next_cursor: AuditCursor | None


def audit_events_page(
    *, tenant: Tenant, filters: ExportFilters, cursor: AuditCursor | None = None, limit: int = AUDIT_PAGE_SIZE
) -> AuditEventsPage:
    """One page of the tenant's events matching ``filters``, newest first (a keyset read
    on the (tenant, seq) index, however deep the page)."""
    events = AuditEvent.objects.filter(filters.row_condition(), tenant_id=tenant.pk)
    if filters.since:
        events = events.filter(created_at__gte=filters.since)
    if filters.until:
        events = events.filter(created_at__lt=filters.until)
    if cursor is not None:
        events = events.filter(seq__lt=cursor.seq)
    rows = event_rows(events.order_by("-seq")[: limit + 1])
    if len(rows) <= limit:
        return AuditEventsPage(rows, None)
    rows = rows[:limit]
    return AuditEventsPage(rows, AuditCursor(rows[-1]["seq"]))
