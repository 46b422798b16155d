"""A local OpenAI-compatible server for tests: real HTTP, scripted answers.

The real ``ChatOpenAI`` client talks to it over a socket on 127.0.0.1, so the whole
client path (request building, retries, timeouts, structured-output parsing) runs for
real. Each request takes the next scripted step; with the script empty it answers
``{"facts": []}``. Steps:

- ``facts(*items)``: a well-formed answer, shaped as the request asked (a tool call when
  it sent ``tools``, JSON content when it asked for a ``response_format``);
- ``raw(text)``: that text where the JSON should be (a malformed answer);
- ``status(code)``: an HTTP error;
- ``slow(seconds, step)``: wait, then answer ``step`` (longer than the client's timeout = a timeout);
- ``hold(event, step)``: wait until the test sets ``event``, then answer ``step``.

``responder``, when set, answers instead of ``{"facts": []}`` once the script is empty: it
gets the message being extracted and returns a step.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def facts(*items):
    return ("facts", list(items))


def raw(text):
    return ("raw", text)


def status(code):
    return ("status", code)


def slow(seconds, step):
    return ("slow", seconds, step)


def hold(event, step):
    return ("hold", event, step)


def fact(field, value, evidence, *, entity_type="user", entity_id="me", confidence=0.9, **extra):
    """One item of a scripted answer (the EntityFact shape)."""
    return {
        "entity_type": entity_type,
        "entity_id": entity_id,
        "field": field,
        "value": value,
        "confidence": confidence,
        "source_message_id": extra.pop("source_message_id", "m-1"),
        "evidence": evidence,
        **extra,
    }


def message_of(body: dict) -> str:
    """The message the extractor asked about (between the prompt's <<< and >>>)."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    return prompt.rpartition("<<<\n")[2].partition("\n>>>")[0]


@dataclass
class SeenRequest:
    at: float
    body: dict

    @property
    def prompt(self) -> str:
        return "\n".join(str(message.get("content") or "") for message in self.body.get("messages", []))


@dataclass
class FakeOpenAI:
    script: deque = field(default_factory=deque)
    requests: list[SeenRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    responder: object = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, *steps) -> None:
        with self.lock:
            self.script.extend(steps)

    def _next_step(self, body):
        with self.lock:
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(message_of(body))
        return ("facts", [])

    def start(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append(SeenRequest(time.monotonic(), body))
                try:
                    self._respond(fake._next_step(body), body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout): nothing to answer

            def _respond(self, step, body):
                kind = step[0]
                if kind == "slow":
                    time.sleep(step[1])
                    return self._respond(step[2], body)
                if kind == "hold":
                    step[1].wait(30)
                    return self._respond(step[2], body)
                if kind == "status":
                    return self._send(step[1], {"error": {"message": "scripted failure", "type": "server_error"}})
                arguments = json.dumps({"facts": step[1]}, ensure_ascii=False) if kind == "facts" else step[1]
                if body.get("tools"):
                    name = body["tools"][0]["function"]["name"]
                    message = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
                        ],
                    }
                    finish = "tool_calls"
                else:
                    message, finish = {"role": "assistant", "content": arguments}, "stop"
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "test"),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="fake-openai", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
