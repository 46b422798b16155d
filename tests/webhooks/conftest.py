"""A real webhook receiver on loopback: an http.server thread that records every request
and answers from a script (status codes, delays)."""
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reviews.actors import SYSTEM
from reviews.models import WebhookEventType
from reviews.services.tenants import api_key_create
from reviews.webhooks.endpoints import webhook_create
from tests.conftest import KeyClient


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes


@dataclass
class Receiver:
    url: str
    requests: list = field(default_factory=list)
    # Each request takes the next (status, delay in seconds); then 200 at once.
    script: list = field(default_factory=list)
    # Seconds between the bytes of each answer's status line and headers (a slow receiver).
    trickle: float = 0

    def answer_with(self, *steps):
        self.script[:] = list(steps)

    @property
    def types(self) -> list[str]:
        return [json.loads(r.body)["type"] for r in self.requests]


@pytest.fixture
def receiver():
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, delay = state.script.pop(0) if state.script else (200, 0)
            if delay:
                time.sleep(delay)
            state.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if state.trickle:
                for byte in f"HTTP/1.1 {status} OK\r\nContent-Length: 0\r\n\r\n".encode():
                    time.sleep(state.trickle)
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the sender hung up
                        return
                return
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # shutdown() waits for the loop's next look at its flag: every poll_interval (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://localhost:{server.server_address[1]}/hooks"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def private_allowed(settings):
    settings.MEMORY_WEBHOOK_ALLOW_PRIVATE = True
    settings.MEMORY_WEBHOOK_RETRY_SECONDS = [0, 0, 0]
    settings.MEMORY_WEBHOOK_TIMEOUT_SECONDS = 0.5
    return settings


@pytest.fixture
def endpoint(tenant, receiver, private_allowed):
    """tenant-1's endpoint at the receiver, subscribed to every event; (endpoint, secret)."""
    return webhook_create(tenant=tenant, url=receiver.url, events=list(WebhookEventType.values), actor=SYSTEM)


@pytest.fixture
def subject_client(tenant):
    key, raw = api_key_create(tenant=tenant, scopes=["subject"])
    return KeyClient(raw, key)
