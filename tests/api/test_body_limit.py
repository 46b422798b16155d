"""A body over MEMORY_MAX_BODY_BYTES gets a 413 the client can read (SPEC §7): the server
reads and discards the body (up to a bound) before answering.

Against gunicorn, as in production: it closes the connection after answering, and a
client still uploading then gets a reset instead of the answer unless the body was read.
(Django's development server, behind ``live_server``, reads what is left of every body
itself, so it cannot show the difference.)
"""
import json
import socket

import pytest

from tests.gunicorn import serving

LIMIT = 64 * 1024
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gunicorn_address(django_db_setup):
    """gunicorn with one sync worker, on the test database (it only looks keys up)."""
    with serving(workers=1, MEMORY_MAX_BODY_BYTES=str(LIMIT)) as port:
        yield ("127.0.0.1", port)


def upload(address, path: str, size: int, declared: int | None = None) -> bytes:
    """POST ``size`` bytes the way a plain client does: send it all, then read the answer."""
    declared = size if declared is None else declared
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer not-a-key\r\nContent-Length: {declared}\r\n\r\n"
    ).encode()
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(head)
        chunk = b" " * 65536
        sent = 0
        while sent < size:
            sock.sendall(chunk[: size - sent])
            sent += min(len(chunk), size - sent)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while data := sock.recv(65536):
            answer += data
    return answer


def parse(answer: bytes) -> tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


@pytest.mark.parametrize("path", ["/api/v1/messages", "/compat/mem0/v3/memories/add/"])
def test_the_client_reads_the_413_after_uploading_a_body_far_over_the_limit(gunicorn_address, path):
    status, body = parse(upload(gunicorn_address, path, 60 * LIMIT))

    assert status == 413
    assert body["error"]["code"] == "payload_too_large"
    assert str(LIMIT) in body["error"]["message"]


def test_a_body_under_the_limit_goes_on_to_the_view(gunicorn_address):
    status, body = parse(upload(gunicorn_address, "/api/v1/messages", LIMIT // 2))

    assert status == 401  # the key is checked: the body was not refused for its size
    assert body["error"]["code"] == "unauthenticated"
