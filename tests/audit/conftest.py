import io
import json

import pytest

from reviews.exports import AuditExporter, ExportFilters
from tests.erasure.memory import build_memory


@pytest.fixture
def memory(tenant, publish, submit):
    return build_memory(tenant, publish, submit)


def export_bytes(tenant, fmt="jsonl", **filters) -> bytes:
    return b"".join(AuditExporter(tenant=tenant, filters=ExportFilters(**filters), format=fmt).stream())


def jsonl_records(data: bytes) -> tuple[list[dict], dict]:
    """(rows, manifest) of a JSON Lines export."""
    lines = [json.loads(line) for line in data.splitlines()]
    return lines[:-1], lines[-1]["manifest"]


def as_stream(data: bytes):
    return io.BytesIO(data)


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Staff personas log in here on every test: a slow password hash only costs time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
