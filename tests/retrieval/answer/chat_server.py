"""A scripted OpenAI-compatible chat-completions server on loopback, for tests of the answer stage.

    with ChatServer([status(429), tool_call({"answer": "42"})]) as server:
        ChatClient(server.url, "m").chat(messages)

Each POST to ``/chat/completions`` (to any path with ``ChatServer(path=None)``, as an HTTP
retriever's service) consumes the next scripted reply; one that finds none left is answered 500
"no scripted reply left". Besides plain replies the script can redirect, trickle a whole answer
(status line, headers and body) byte by byte, stream a body of any size without holding it, and
echo the request's bearer key back in any form, in the body or in a header. Every request is recorded in ``server.requests`` as
``{"path", "headers", "body", "started", "finished"}``: ``time.monotonic()`` seconds when the
request arrived and when its answer began to go out (None when shutdown cut a hang short).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "scripted-model"


# Full chat-completion payloads ------------------------------------------------------------------

def completion(message: dict, finish_reason: str | None, model: str = MODEL) -> dict:
    """A whole chat.completion object with one choice."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def tool_call_completion(arguments: dict | str, name: str = "submit_answer",
                         finish_reason: str = "tool_calls") -> dict:
    """A completion whose message calls ``name``; a str ``arguments`` is sent as is (it may be malformed JSON)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {"role": "assistant", "content": None,
               "tool_calls": [{"id": "call_0", "type": "function",
                               "function": {"name": name, "arguments": text}}]}
    return completion(message, finish_reason)


def content_completion(text: str, finish_reason: str = "stop") -> dict:
    return completion({"role": "assistant", "content": text}, finish_reason)


class FakeTime:
    """A clock that moves only when slept on; every sleep is recorded (a client's ``sleep`` and ``clock``)."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self):
        return self.now


# Scripted replies -------------------------------------------------------------------------------

@dataclass
class Reply:
    status: int = 200
    body: str = ""
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0
    echo_headers: bool = False
    content_type: str = "application/json"
    # The body and extra headers made from the bearer key the request carried (echo_key)
    render: Callable[[str], str] | None = None
    render_headers: Callable[[str], dict] | None = None
    trickle_s: float = 0.0  # seconds between the bytes of the whole answer, headers included
    trickle_body_only: bool = False  # status line and headers at once, then the body byte by byte
    stream_bytes: int = 0  # filler bytes streamed after the body, never held in memory
    declared_length: int | None = None  # a Content-Length to claim instead of the true one
    data: bytes | None = None  # bytes sent as the body instead of ``body`` (a compressed body)


def tool_call(arguments: dict | str, name: str = "submit_answer", finish_reason: str = "tool_calls") -> Reply:
    return Reply(body=json.dumps(tool_call_completion(arguments, name, finish_reason)))


def content(text: str, finish_reason: str = "stop") -> Reply:
    return Reply(body=json.dumps(content_completion(text, finish_reason)))


def status(code: int, body: str = '{"error": {"message": "scripted error"}}', headers: dict | None = None) -> Reply:
    """Any status with any body: 429, 503, 500, or 200 with text that is not JSON."""
    return Reply(status=code, body=body, headers=dict(headers or {}))


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Waits ``seconds`` before answering ``then`` (a content reply by default); shutdown cuts the wait short."""
    reply = then or content("answered late")
    return Reply(reply.status, reply.body, dict(reply.headers), seconds, reply.echo_headers)


def echo_headers() -> Reply:
    """A 400 whose body quotes every request header, as some servers do: the client must scrub the key."""
    return Reply(status=400, echo_headers=True)


def redirect(location: str, code: int = 302) -> Reply:
    return Reply(status=code, body="", headers={"Location": location})


def trickle(reply: Reply, seconds_per_byte: float, body_only: bool = False) -> Reply:
    """``reply`` written one byte at a time, status line and headers included unless ``body_only``."""
    return Reply(reply.status, reply.body, dict(reply.headers), content_type=reply.content_type,
                 trickle_s=seconds_per_byte, trickle_body_only=body_only)


def huge(n_bytes: int, declared: bool = False) -> Reply:
    """A 200 whose body is ``n_bytes`` of JSON-looking filler, streamed; ``declared`` sends its true
    Content-Length, otherwise the body simply runs until the connection closes."""
    return Reply(body='{"choices": [{"message": {"content": "', stream_bytes=n_bytes,
                 declared_length=n_bytes if declared else -1)


def encoded(data: bytes, encoding: str, code: int = 200) -> Reply:
    """A reply whose body is ``data`` as given, declared with ``Content-Encoding: encoding`` (gzip, ...)."""
    return Reply(status=code, data=data, headers={"Content-Encoding": encoding})


def raw(body: str, content_type: str = "application/json", code: int = 200) -> Reply:
    return Reply(status=code, body=body, content_type=content_type)


def echo_key(render: Callable[[str], str], code: int = 200, headers: Callable[[str], dict] | None = None) -> Reply:
    """A reply built from the request's bearer key: ``render(key)`` is the body (e.g. a tool call
    quoting the key JSON-escaped), ``headers(key)`` extra response headers."""
    return Reply(status=code, render=render, render_headers=headers)


# The server -------------------------------------------------------------------------------------

class ChatServer:
    def __init__(self, replies=(), path: str | None = "/chat/completions"):
        self.path = path
        self.written = 0  # bytes of streamed filler the last huge reply got out before the client hung up
        self.replies = deque(replies)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def remaining(self) -> int:
        return len(self.replies)

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True  # a hanging handler never holds up shutdown
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=2)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        length = int(handler.headers.get("Content-Length") or 0)
        data = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(data) if data else None
        except json.JSONDecodeError:
            body = None
        record = {"path": handler.path, "headers": dict(handler.headers.items()), "body": body,
                  "started": started, "finished": None}
        with self._lock:
            self.requests.append(record)
            if self.path is not None and handler.path != self.path:
                reply = Reply(status=404, body=f"no such endpoint: {handler.path}")
            elif self.replies:
                reply = self.replies.popleft()
            else:
                reply = Reply(status=500, body="no scripted reply left")
        if reply.delay_s and self._closing.wait(reply.delay_s):
            return
        text = reply.body
        key = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        headers = dict(reply.headers)
        if reply.echo_headers:
            text = "bad request; you sent:\n" + "".join(f"{k}: {v}\n" for k, v in sorted(handler.headers.items()))
        if reply.render is not None:
            text = reply.render(key)
        if reply.render_headers is not None:
            headers.update(reply.render_headers(key))
        payload = text.encode("utf-8") if reply.data is None else reply.data
        length = len(payload) + reply.stream_bytes if reply.declared_length is None else reply.declared_length
        # Set before sending: a client can only start its next request after this answer arrives.
        record["finished"] = time.monotonic()
        head = [f"HTTP/1.0 {reply.status} scripted", f"Content-Type: {reply.content_type}"]
        head += [f"Content-Length: {length}"] if length >= 0 else []
        head += [f"{name}: {value}" for name, value in headers.items()]
        head_bytes = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8")
        whole = head_bytes + payload
        try:
            if reply.trickle_s:
                start = len(head_bytes) if reply.trickle_body_only else 0
                handler.wfile.write(whole[:start])
                handler.wfile.flush()
                for i in range(start, len(whole)):
                    if self._closing.wait(reply.trickle_s):
                        return
                    handler.wfile.write(whole[i:i + 1])
                    handler.wfile.flush()
                return
            handler.wfile.write(whole)
            block = b"x" * 65536
            self.written = 0
            while self.written < reply.stream_bytes:
                n = min(len(block), reply.stream_bytes - self.written)
                handler.wfile.write(block if n == len(block) else block[:n])  # no copy: tests measure memory
                self.written += n
        except OSError:  # the client gave up (a timeout or size test): nothing more to answer
            pass
