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

``POST /embeddings`` answers with :func:`stub_embedding` of each input (a deterministic
bag of hashed words and character pairs, so texts that share words are close), in the
encoding the client asked for (the OpenAI client asks for base64 floats by default);
``embedding_failures`` scripted HTTP errors come first.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
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


STUB_DIMENSIONS = 64


def stub_embedding(text: str) -> list[float]:
    """Words and CJK character pairs hashed into 64 dimensions, unit length."""
    text = text.casefold()
    grams = re.findall(r"[a-z0-9]+", text)
    cjk = "".join(re.findall(r"[\u4e00-\u9fff]", text))
    grams += [cjk[i : i + 2] for i in range(max(len(cjk) - 1, 0))]
    vector = [0.0] * STUB_DIMENSIONS
    for gram in grams:
        digest = hashlib.sha256(gram.encode()).digest()
        vector[digest[0] % STUB_DIMENSIONS] += 1.0 if digest[1] % 2 else -1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def embeddings_answer(body: dict) -> dict:
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    data = []
    for index, text in enumerate(inputs):
        vector = stub_embedding(str(text))
        if body.get("encoding_format") == "base64":
            encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        else:
            data.append({"object": "embedding", "index": index, "embedding": vector})
    return {"object": "list", "data": data, "model": body.get("model", "test"),
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


def message_of(body: dict) -> str:
    """The message the extractor asked about (the last block between <<<TAG and TAG>>>)."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    blocks = re.findall(r"^<<<(\w+)\n(.*?)\n\1>>>$", prompt, re.M | re.S)
    return blocks[-1][1] if blocks else ""


@dataclass
class SeenRequest:
    at: float
    body: dict
    path: str = ""

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
    embedding_failures: int = 0

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
                    fake.requests.append(SeenRequest(time.monotonic(), body, self.path))
                if self.path.rstrip("/").endswith("/embeddings"):
                    with fake.lock:
                        failing = fake.embedding_failures > 0
                        fake.embedding_failures -= failing
                    if failing:
                        return self._send(500, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return self._send(200, embeddings_answer(body))
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
        # shutdown() waits for the loop's next look at its flag: every poll_interval (0.5 s by default).
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


if __name__ == "__main__":
    # A stub endpoint for `eval_recall --embedder openai:<model>` by hand:
    # python -m tests.extraction.fake_openai, then OPENAI_BASE_URL=<the printed url>.
    stub = FakeOpenAI().start()
    print(stub.url, flush=True)
    threading.Event().wait()
