"""The auditor's verify page takes any file someone hands back: every malformed one is
named as a problem on the page, never a 500, and nothing is stored."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from reviews.exports import CSV_MANIFEST_MARK, COLUMNS
from tests.fuzz.pages import stored_state

pytestmark = pytest.mark.django_db

CSV_HEADER = ",".join(COLUMNS).encode() + b"\r\n"
ROW = {"seq": 1, "tenant_id": 1, "prev_hash": "0" * 64, "hash": "1" * 64, "created_at": "2026-01-01T00:00:00+00:00"}

FILES = {
    "empty": b"",
    "blank lines": b"\n\n  \n",
    "not utf-8": b"\xff\xfe\x00\x81garbage\n",
    "not utf-8 after a csv header": CSV_HEADER + b"\xff\xfe,\x81\r\n",
    "not json": b"hello, world\n",
    "a json array per line": b"[1, 2, 3]\n",
    "a json string": b'"just a string"\n',
    "nested far too deep": b"{" + b'"a":[' * 10_000 + b"\n",
    "nul escapes": b'{"seq": 1, "actor": "a\\u0000b"}\n',
    "lone surrogate escape": b'{"seq": 1, "actor": "\\ud800"}\n',
    "seq a string": json.dumps({**ROW, "seq": "one"}).encode() + b"\n" + json.dumps({**ROW, "seq": "two"}).encode(),
    "seq a huge number": json.dumps({**ROW, "seq": 10**40}).encode() + b"\n",
    "seq null, twice": (json.dumps({**ROW, "seq": None}) + "\n" + json.dumps({**ROW, "seq": None})).encode(),
    "created_at not a date": json.dumps({**ROW, "created_at": "yesterday"}).encode(),
    "created_at a number": json.dumps({**ROW, "created_at": 5}).encode(),
    "manifest not an object": b'{"manifest": [1, 2]}\n',
    "manifest a string": b'{"manifest": "x"}\n',
    "manifest with wrong types": json.dumps(
        {"manifest": {"tenant_id": "x", "rows": "many", "contiguous": "yes", "from_genesis": 1,
                      "chain_head": "head", "sha256": 5, "first_seq": [], "last_seq": {}}}
    ).encode(),
    "manifest naming a huge sequence": json.dumps(
        {"manifest": {"tenant_id": 1, "chain_head": {"seq": 10**40, "hash": "x"}}}
    ).encode(),
    "csv header only": CSV_HEADER,
    "csv short row": CSV_HEADER + b"1,2,3\r\n",
    "csv manifest not json": CSV_HEADER + f"{CSV_MANIFEST_MARK},{{not json\r\n".encode(),
    "csv manifest a list": CSV_HEADER + f'{CSV_MANIFEST_MARK},"[1]"\r\n'.encode(),
    "csv with a nul": CSV_HEADER + b"a\x00b" + b"," * (len(COLUMNS) - 1) + b"\r\n",
    "csv cell over the field limit": CSV_HEADER + b'"' + b"x" * 200_000 + b'"\r\n',
    "a 3 MiB line": b"{" + b" " * (3 * 1024 * 1024) + b"}\n",
}


@pytest.fixture
def auditor_client(client, auditor):
    client.force_login(auditor)
    client.raise_request_exception = False
    return client


@pytest.mark.parametrize("content", FILES.values(), ids=FILES.keys())
def test_a_malformed_file_is_a_problem_on_the_page_not_a_500(auditor_client, content):
    before = stored_state()

    response = auditor_client.post("/audit/verify/", {"file": SimpleUploadedFile("export.jsonl", content)})

    assert response.status_code == 200, response.exc_info and response.exc_info[1]
    result = response.context["file_result"]
    assert result is not None and not result.ok and result.problems
    assert stored_state() == before


def test_no_file_at_all_asks_for_one(auditor_client):
    response = auditor_client.post("/audit/verify/", {})
    assert response.status_code == 200 and response.context["file_error"]
