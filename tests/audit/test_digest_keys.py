"""Digest keys (SPEC §6): MEMORY_DIGEST_KEY, never DJANGO_SECRET_KEY; old keys kept on rotation."""
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.actors import Actor
from reviews.models import Fact
from reviews.policy.normalize import value_digest
from reviews.services.candidates import candidate_reject
from tests.conftest import candidate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def digest_key_k1(settings):
    """Every digest of a test starts under k1 (autouse: before the tenant's first event)."""
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k1-digest-key", []


@pytest.fixture
def memory_under_k1(tenant, submit, reviewer):
    """A published name, and a location someone refused, all digested under key k1."""
    [name] = submit(tenant, "alice", candidate(value="Alice", confidence=0.99))
    [berlin] = submit(tenant, "alice", candidate(field="location", value="Berlin", confidence=0.9))
    candidate_reject(tenant=tenant, candidate_id=berlin.candidate_id, version=1, note="wrong city",
                     actor=Actor.reviewer(reviewer))
    assert name.status == "auto_approved"
    return Fact.objects.get(pk=name.fact_id)


def verify_audit() -> str:
    out = StringIO()
    call_command("verify_audit", stdout=out)
    return out.getvalue()


def resubmit(tenant, submit):
    return submit(
        tenant,
        "alice",
        candidate(value="alice", confidence=0.99),  # the same normalised value
        candidate(field="location", value="berlin", confidence=0.9),
    )


def test_rotating_the_secret_key_keeps_verification_duplicates_and_suppression(settings, tenant, submit, memory_under_k1):
    settings.SECRET_KEY = "a-completely-different-secret-key-after-rotation"
    assert "ok" in verify_audit()
    merged, refused = resubmit(tenant, submit)
    assert (merged.status, merged.fact_id) == ("merged", memory_under_k1.pk)
    assert (refused.status, refused.reason) == ("rejected", "suppressed")


def test_rotating_the_digest_key_with_the_old_one_listed_keeps_both(settings, tenant, submit, memory_under_k1):
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k2-digest-key", ["k1-digest-key"]
    assert "ok" in verify_audit()
    merged, refused = resubmit(tenant, submit)
    assert (merged.status, merged.fact_id) == ("merged", memory_under_k1.pk)
    assert (refused.status, refused.reason) == ("rejected", "suppressed")
    assert "ok" in verify_audit()  # events written under k2 after those under k1


def test_without_the_old_key_the_stored_digests_no_longer_match(settings, tenant, submit, memory_under_k1):
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k2-digest-key", []
    with pytest.raises(CommandError):
        verify_audit()
    merged, _refused = resubmit(tenant, submit)
    assert merged.status != "merged"


def test_rekey_digests_moves_fact_digests_to_the_current_key(settings, memory_under_k1):
    settings.MEMORY_DIGEST_KEY, settings.MEMORY_DIGEST_OLD_KEYS = "k2-digest-key", ["k1-digest-key"]
    out = StringIO()
    call_command("rekey_digests", stdout=out)
    assert out.getvalue().startswith("1 fact digest(s)")
    memory_under_k1.refresh_from_db()
    assert memory_under_k1.value_digest == value_digest("Alice")
    call_command("rekey_digests", stdout=(again := StringIO()))
    assert again.getvalue().startswith("0 fact digest(s)")


def test_production_settings_refuse_to_start_without_a_digest_key():
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_DIGEST_KEY"}
    env.update(DJANGO_DEBUG="0", DJANGO_SECRET_KEY="a-production-secret-key-for-this-test")
    probe = subprocess.run(
        [sys.executable, "-c", "import memory_portal.settings"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0 and "MEMORY_DIGEST_KEY must be set" in probe.stderr
    env["MEMORY_DIGEST_KEY"] = "a-production-digest-key"
    assert subprocess.run([sys.executable, "-c", "import memory_portal.settings"], cwd=ROOT, env=env).returncode == 0
