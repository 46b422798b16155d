"""manage.py export_audit and verify_audit --file (SPEC §8)."""
import json

import pytest
from django.core.management import CommandError, call_command

from reviews.models import AuditChainHead, AuditEvent
from tests.erasure.memory import NAME, USER

pytestmark = pytest.mark.django_db


def test_export_then_verify_the_file(tenant, memory, tmp_path, capsys):
    target = tmp_path / "audit.jsonl"
    call_command("export_audit", "tenant-1", "--output", str(target))
    manifest = json.loads((tmp_path / "audit.jsonl.manifest.json").read_text())
    head = AuditChainHead.objects.get(tenant_id=tenant.pk)
    # The export records its own event first: it is part of the file.
    assert manifest["chain_head"] == {"seq": head.seq, "hash": head.hash}
    assert manifest["rows"] == AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    assert json.loads(target.read_bytes().splitlines()[-1])["manifest"] == manifest

    call_command("verify_audit", "--file", str(target))
    assert "ok," in capsys.readouterr().out


def test_a_tampered_file_fails_naming_the_row(tenant, memory, tmp_path, capsys):
    target = tmp_path / "audit.csv"
    call_command("export_audit", "tenant-1", "--format", "csv", "--user-id", USER, "--output", str(target))
    target.write_bytes(target.read_bytes().replace(NAME.encode(), b"Mallory", 1))
    with pytest.raises(CommandError, match=r"line \d+ \(event #\d+\): values do not match their digests"):
        call_command("verify_audit", "--file", str(target))


def test_a_manifest_kept_apart_is_used(tenant, memory, tmp_path):
    target = tmp_path / "audit.jsonl"
    call_command("export_audit", "tenant-1", "--output", str(target))
    body = b"".join(target.read_bytes().splitlines(keepends=True)[:-1])
    target.write_bytes(body)
    call_command("verify_audit", "--file", str(target), "--manifest", str(tmp_path / "audit.jsonl.manifest.json"))
    with pytest.raises(CommandError, match="no manifest"):
        call_command("verify_audit", "--file", str(target))


def test_export_to_standard_output_with_filters(tenant, memory, capsysbinary):
    call_command("export_audit", "tenant-1", "--action", "fact.*", "--since", "2000-01-01T00:00:00")
    lines = capsysbinary.readouterr().out.splitlines()
    assert {json.loads(line)["action"].split(".")[0] for line in lines[:-1]} == {"fact"}


def test_an_unknown_tenant_or_file_is_an_error(tenant, tmp_path):
    with pytest.raises(CommandError, match="No tenant"):
        call_command("export_audit", "ghost")
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("verify_audit", "--file", str(tmp_path / "missing.jsonl"))
