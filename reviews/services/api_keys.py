"""API keys beyond create and revoke: rotation with a grace period, and "last used".

Rotation (what mature tools call "roll"): a new key with the same name, scopes and source,
shown once; the old key keeps working until the grace period ends and is refused from
then on (it expires), so the agents using it can be moved over without an outage. A key
already due to expire sooner keeps its earlier end.
"""
from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Annotated

from django.conf import settings
from django.utils import timezone

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput, InvalidTransition, NotFound
from ..models import ApiKey, AuditAction, Tenant
from ..screening import Verbatim
from .boundary import service
from .tenants import api_key_cache_clear, api_key_create, api_key_snapshot

# A rotation's longest grace: long enough for a slow deployment, short enough that a leaked
# key rotated "with grace" does not live on for months.
MAX_GRACE = timedelta(days=30)
# "Last used" is kept to this resolution: one UPDATE per key and process at most this often,
# instead of a write on every call of the hot recall path.
LAST_USED_EVERY_SECONDS = 60


@service
def api_key_rotate(
    *,
    tenant: Tenant,
    prefix: Annotated[str, Verbatim("an API key's public prefix: only looked up, never stored from the input")],
    actor: Actor,
    grace: timedelta | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str, ApiKey]:
    """Replace a live key by a new one with the same name, scopes and source (and its own
    ``expires_at``, if any: a key rotated because it is about to expire should not inherit that).

    1. Lock the old key (another tenant's is not found); refuse one revoked, expired or
       already rotated (InvalidTransition, 409).
    2. Create the new key (``api_key.created``), then end the old one at ``now + grace``
       (default ``MEMORY_API_KEY_ROTATION_GRACE_SECONDS``; 0: at once) unless it ends
       sooner, and record ``api_key.rotated`` with the old key's before and after.

    Returns (new key, its raw key shown this once, the old key).
    """
    if grace is None:
        grace = timedelta(seconds=settings.MEMORY_API_KEY_ROTATION_GRACE_SECONDS)
    if grace < timedelta(0) or grace > MAX_GRACE:
        raise InvalidInput(
            "The grace period is between 0 seconds and 30 days.", details={"grace_seconds": int(grace.total_seconds())}
        )
    old = ApiKey.objects.select_for_update().filter(tenant=tenant, prefix=prefix).first()
    if old is None:
        raise NotFound("No such API key.", details={"prefix": prefix})
    now = timezone.now()
    if not old.is_live(now) or old.replaced_by:
        raise InvalidTransition(
            "Only a live key that was not rotated yet can be rotated.",
            details={"prefix": prefix, "replaced_by": old.replaced_by or None},
        )
    new, raw_key = api_key_create(
        tenant=tenant, scopes=list(old.scopes), source=old.source, name=old.name, expires_at=expires_at, actor=actor
    )
    before = api_key_snapshot(old)
    ends = now + grace
    old.expires_at = min(old.expires_at, ends) if old.expires_at else ends
    old.replaced_by = new.prefix
    old.save(update_fields=["expires_at", "replaced_by"])
    # This process must not keep serving the old key from its cache past its new end.
    api_key_cache_clear()
    audit.record(
        tenant.pk,
        EventDraft(
            actor=str(actor),
            action=AuditAction.API_KEY_ROTATED,
            object_type="api_key",
            object_id=old.prefix,
            before=before,
            after=api_key_snapshot(old),
        ),
    )
    return new, raw_key, old


# When this process last wrote "last used" for each key id (monotonic seconds).
_marked: dict[int, float] = {}
_MARKED_MAX = 10_000


def api_key_mark_used(key: ApiKey, *, now: datetime | None = None) -> bool:
    """Remember that ``key`` authenticated a call; True when the row was written.

    Bookkeeping, not a change anyone decided: no audit event (one per call would bury the
    chain), and at most one UPDATE per key and process every LAST_USED_EVERY_SECONDS. The
    UPDATE only ever moves the time forward, so processes racing cannot set it back.
    """
    clock = time.monotonic()
    if clock - _marked.get(key.pk, float("-inf")) < LAST_USED_EVERY_SECONDS:
        return False
    if len(_marked) >= _MARKED_MAX:
        _marked.clear()
    _marked[key.pk] = clock
    now = now or timezone.now()
    written = ApiKey.objects.filter(pk=key.pk).exclude(last_used_at__gte=now).update(last_used_at=now)
    key.last_used_at = now
    return bool(written)


def api_key_marks_clear() -> None:
    """Forget which keys this process marked (tests, and a process that forks)."""
    _marked.clear()
