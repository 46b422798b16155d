"""Helpers for rows read through a raw cursor, which the ORM's conversions do not reach."""
from datetime import datetime
from datetime import timezone as dt_timezone

from django.utils import timezone


def utc_aware(value):
    """SQLite hands raw cursors naive UTC datetimes (the ORM would have converted them)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value is not None and timezone.is_naive(value):
        value = value.replace(tzinfo=dt_timezone.utc)
    return value
