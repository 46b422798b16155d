"""The export format: rows that re-hash from the file alone, the manifest, and verification
naming the row someone changed."""
import csv
import io
import json

import pytest

from reviews.actors import Actor
from reviews.audit import GENESIS_HASH, event_hash
from reviews.exports import COLUMNS, event_from_row, verify_export_file
from reviews.models import AuditChainHead, AuditEvent, Fact
from reviews.services.erasure import subject_erase
from tests.erasure.memory import NAME, USER

from .conftest import as_stream, export_bytes, jsonl_records

pytestmark = pytest.mark.django_db


def test_an_unfiltered_export_is_the_whole_chain(memory, tenant):
    rows, manifest = jsonl_records(export_bytes(tenant))

    head = AuditChainHead.objects.get(tenant_id=tenant.pk)
    assert manifest["rows"] == len(rows) == AuditEvent.objects.filter(tenant_id=tenant.pk).count()
    assert manifest["chain_head"] == {"seq": head.seq, "hash": head.hash}
    assert (manifest["first_seq"], manifest["last_seq"]) == (1, head.seq)
    assert rows[0]["prev_hash"] == GENESIS_HASH and rows[-1]["hash"] == head.hash
    assert manifest["contiguous"] and manifest["from_genesis"]
    assert [row["seq"] for row in rows] == list(range(1, head.seq + 1))
    assert set(rows[0]) == set(COLUMNS)
    assert verify_export_file(as_stream(export_bytes(tenant))).ok


def test_rows_carry_values_until_erased(memory, tenant):
    rows, _ = jsonl_records(export_bytes(tenant, user_id=USER, action="fact.created"))
    name_row = next(row for row in rows if row["after"]["field"] == "name")
    assert name_row["after"]["value"] == NAME and name_row["erased"] is False

    subject_erase(tenant=tenant, user_id=USER, actor=Actor("api_key", "admin"))

    data = export_bytes(tenant, user_id=USER, action="fact.created")
    rows, _ = jsonl_records(data)
    assert all(row["erased"] and row["after"] is None for row in rows)
    assert NAME.encode() not in data
    assert verify_export_file(as_stream(data)).ok


def test_filters_select_rows(memory, tenant):
    rows, manifest = jsonl_records(export_bytes(tenant, action="fact.*", user_id=USER))
    assert rows and {row["action"].split(".")[0] for row in rows} == {"fact"}
    assert {row["subject_user_id"] for row in rows} == {USER}
    assert not manifest["contiguous"]
    assert manifest["filters"]["action"] == "fact.*"
    assert verify_export_file(as_stream(export_bytes(tenant, action="fact.*", user_id=USER))).ok

    rows, _ = jsonl_records(export_bytes(tenant, actor="policy"))
    assert rows and {row["actor"] for row in rows} == {"policy"}
    fact_id = memory.facts["name"].pk
    rows, _ = jsonl_records(export_bytes(tenant, object=f"fact:{fact_id}"))
    assert {(row["object_type"], row["object_id"]) for row in rows} == {("fact", str(fact_id))}


def test_a_time_range_is_a_contiguous_stretch(memory, tenant):
    events = list(AuditEvent.objects.filter(tenant_id=tenant.pk).order_by("seq"))
    middle = events[len(events) // 2]
    data = export_bytes(tenant, since=middle.created_at)
    rows, manifest = jsonl_records(data)
    assert rows[0]["seq"] <= middle.seq and rows[-1]["seq"] == events[-1].seq
    assert manifest["contiguous"] and not (manifest["from_genesis"] and rows[0]["seq"] != 1)
    assert verify_export_file(as_stream(data)).ok


def test_other_tenants_events_never_appear(memory, tenant, other_tenant):
    rows, _ = jsonl_records(export_bytes(other_tenant))
    assert {row["tenant_id"] for row in rows} == {other_tenant.pk}
    assert all(USER != row["subject_user_id"] for row in rows)


def tamper_jsonl(data: bytes, seq: int, change) -> bytes:
    lines = data.splitlines(keepends=True)
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("seq") == seq:
            change(record)
            lines[i] = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    return b"".join(lines)


def line_of(data: bytes, seq: int) -> int:
    return next(i for i, line in enumerate(data.splitlines(), start=1) if json.loads(line).get("seq") == seq)


def value_seq(tenant):
    """The event that published the subject's name: it carries a value."""
    name = Fact.objects.get(tenant=tenant, field="name", subject__user_id=USER)
    return AuditEvent.objects.get(tenant_id=tenant.pk, action="fact.created", object_id=str(name.pk)).seq


@pytest.mark.parametrize(
    "change,problem",
    [
        (lambda row: row["after"].update(value="Mallory"), "values do not match their digests"),
        (lambda row: row.update(actor="reviewer:999"), "content does not match its hash"),
        (lambda row: row.update(erased=False, reason="added later"), "values do not match their digests"),
    ],
)
def test_tampering_with_one_row_is_detected_and_the_row_named(memory, tenant, change, problem):
    data = export_bytes(tenant)
    seq = value_seq(tenant)

    result = verify_export_file(as_stream(tamper_jsonl(data, seq, change)))

    assert not result.ok
    assert (result.first_problem.line, result.first_problem.seq, result.first_problem.problem) == (
        line_of(data, seq),
        seq,
        problem,
    )
    assert f"event #{seq}" in str(result.first_problem)


def test_a_removed_row_is_named_by_the_gap(memory, tenant):
    data = export_bytes(tenant)
    lines = data.splitlines(keepends=True)
    removed = json.loads(lines[4])["seq"]
    result = verify_export_file(as_stream(b"".join(lines[:4] + lines[5:])))
    assert not result.ok
    assert result.first_problem.seq == removed + 1
    assert "sequence gap" in result.first_problem.problem
    assert any("rows" in p.problem for p in result.problems)


def test_a_rehashed_forgery_still_fails_the_manifest(memory, tenant):
    """Re-computing the forged row's hash breaks the next link; the digest catches the rest."""
    data = export_bytes(tenant)
    seq = value_seq(tenant)

    def forge(row):
        row["actor"] = "reviewer:999"
        row["hash"] = event_hash(prev_hash=row["prev_hash"], event=event_from_row(row))

    result = verify_export_file(as_stream(tamper_jsonl(data, seq, forge)))
    assert not result.ok
    assert result.first_problem.seq == seq + 1
    assert "previous-hash link" in result.first_problem.problem
    assert any("SHA-256" in p.problem for p in result.problems)


def test_a_filtered_export_checks_each_rows_own_hash(memory, tenant):
    data = export_bytes(tenant, user_id=USER)
    seq = value_seq(tenant)
    result = verify_export_file(as_stream(tamper_jsonl(data, seq, lambda row: row.update(action="fact.forged"))))
    assert result.first_problem.seq == seq and result.first_problem.problem == "content does not match its hash"


def test_a_file_without_manifest_is_not_ok(memory, tenant):
    data = export_bytes(tenant)
    result = verify_export_file(as_stream(b"".join(data.splitlines(keepends=True)[:-1])))
    assert [p.problem for p in result.problems] == ["no manifest: the file's completeness cannot be checked"]


def test_csv_round_trips_and_verifies(memory, tenant):
    data = export_bytes(tenant, "csv")
    records = list(csv.reader(io.StringIO(data.decode())))
    assert records[0] == COLUMNS
    assert records[-1][0] == "#manifest"
    manifest = json.loads(records[-1][1])
    assert manifest["rows"] == len(records) - 2 and manifest["format"] == "csv"
    assert verify_export_file(as_stream(data)).ok


def test_csv_tampering_is_named(memory, tenant):
    data = export_bytes(tenant, "csv")
    forged = data.replace(NAME.encode(), b"Mallory", 1)
    result = verify_export_file(as_stream(forged))
    assert not result.ok
    assert result.first_problem.problem == "values do not match their digests"
    assert result.first_problem.seq is not None


def test_csv_cells_cannot_start_a_formula(tenant, submit):
    submit(tenant, "=cmd|' /C calc'!A0", {"entity_type": "user", "entity_id": "me", "field": "name",
                                          "value": "=HYPERLINK(\"x\")", "confidence": 0.97})
    data = export_bytes(tenant, "csv")
    cells = [cell for record in csv.reader(io.StringIO(data.decode())) for cell in record]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert verify_export_file(as_stream(data)).ok
