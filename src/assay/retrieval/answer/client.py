"""A careful client for any OpenAI-compatible chat-completions endpoint.

Careful means, per endpoint (every client with the same ``base_url``):

- one request in flight at a time, and at least ``min_interval_s`` between request starts;
- HTTP 429 and 503 retried ``retries`` times, waiting ``backoff_s`` (5 s, then 10 s), or longer
  when the answer's ``Retry-After`` header (seconds) asks for more;
- three consecutive 429 answers over the client's life stop the run with ``RunBlocked``;
- a timeout or an unreachable host fails the question at once: retrying a model that did not
  answer within ``timeout_s`` doubles the cost of every slow question and rarely helps;
- ``timeout_s`` is a total deadline per request, ``max_bytes`` caps an answer's body, and a
  redirect is never followed (the key stays with the configured origin): see ``assay.core.http``;
- the API key is read from the environment at call time and never appears in an error, the
  request log, a reply's text or parsed body, or ``repr``, even when a server echoes it back raw,
  JSON-escaped or URL-encoded (``assay.core.credentials.redact``; every other credential-named variable
  of assay's environment is redacted as well);
- an HTTP 2xx answer that is not a chat completion (not JSON, no ``choices[0].message`` object)
  raises ``UnreadableReply``, a ``ModelEndpointError`` whose ``raw`` keeps the redacted text.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from assay.core.credentials import redact, redact_all, secret_values
from assay.core.errors import ConfigError, ModelEndpointError, RunBlocked
from assay.core.escape import terminal
from assay.core.http import DEFAULT_MAX_BYTES, TransportError, post_json

RETRIED_STATUSES = (429, 503)
BLOCKED_AFTER_429S = 3
EXCERPT_CHARS = 200


@dataclass
class ChatResponse:
    """One successful chat completion. ``raw`` is the answer's text, ``body`` the same parsed;
    ``message`` and ``finish_reason`` are those of ``choices[0]``; ``attempts`` is 1 plus the retries used."""

    status: int
    body: dict
    raw: str
    finish_reason: str | None
    message: dict
    latency_ms: float
    attempts: int


class _Endpoint:
    """What every client of one base URL shares: the lock that keeps one request in flight, and
    when the last request started (with the clock that time was read from)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last_start: float | None = None
        self.clock = None


_ENDPOINTS: dict[str, _Endpoint] = {}
_ENDPOINTS_GUARD = threading.Lock()


def _endpoint(base_url: str) -> _Endpoint:
    with _ENDPOINTS_GUARD:
        return _ENDPOINTS.setdefault(base_url, _Endpoint())


class UnreadableReply(ModelEndpointError):
    """An HTTP 2xx answer that is not a chat completion: the endpoint answered, but not in the
    protocol's shape. The answer stage records it as a failure at the schema stage."""


def _excerpt(text: str, n: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _retry_after(headers) -> float | None:
    # Only the delay-seconds form; an HTTP-date is ignored and the backoff applies.
    value = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ChatClient:
    """POSTs ``{"model", "messages", "tools"?, "tool_choice"?, "response_format"?, "temperature": 0}``
    to ``{base_url}/chat/completions``; see the module docstring for what it guards against.

    ``client.log`` holds one dict per HTTP attempt (never a request body or a key);
    ``client.stats()`` sums it up. ``sleep`` and ``clock`` are injectable so tests need not wait.
    Once ``RunBlocked`` has been raised the client is ``blocked`` and raises it again without sending.
    """

    def __init__(self, base_url: str, model: str, api_key_env: str | None = None, timeout_s: float = 60.0,
                 min_interval_s: float = 0.0, retries: int = 2, backoff_s=(5.0, 10.0),
                 sleep=time.sleep, clock=time.monotonic, max_bytes: int = DEFAULT_MAX_BYTES):
        if timeout_s <= 0:
            raise ConfigError(f"model endpoint timeout must be positive, got {timeout_s}")
        if min_interval_s < 0:
            raise ConfigError(f"model endpoint minimum interval must not be negative, got {min_interval_s}")
        if retries < 0:
            raise ConfigError(f"model endpoint retries must not be negative, got {retries}")
        if any(b < 0 for b in backoff_s):
            raise ConfigError(f"model endpoint backoff must not be negative, got {tuple(backoff_s)}")
        if max_bytes <= 0:
            raise ConfigError(f"model endpoint answer size limit must be positive, got {max_bytes}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.min_interval_s = min_interval_s
        self.retries = retries
        self.backoff_s = tuple(backoff_s)
        self.max_bytes = max_bytes
        self.log: list[dict] = []
        self.blocked = False
        self._sleep = sleep
        self._clock = clock
        self._consecutive_429s = 0
        self._wall_s = 0.0
        self._where = f"model endpoint {terminal(self.base_url)} ({terminal(model)})"

    def __repr__(self) -> str:
        return (f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r})")

    def stats(self) -> dict:
        """Requests sent, how many were retries, were rate-limited, or failed; seconds spent holding the endpoint."""
        return {"requests": len(self.log),
                "retries": sum(1 for e in self.log if e["retry"] > 0),
                "rate_limited": sum(1 for e in self.log if e["rate_limited"]),
                "errors": sum(1 for e in self.log if e["error"] is not None),
                "wall_s": round(self._wall_s, 3)}

    def chat(self, messages: list[dict], tools: list[dict] | None = None, tool_choice=None,
             response_format: dict | None = None) -> ChatResponse:
        """One chat completion. Raises ModelEndpointError when this question fails and the run may
        go on, RunBlocked when the run must stop."""
        if self.blocked:
            raise RunBlocked(f"{self._where}: the endpoint is rate-limiting every request; "
                             "the run is marked blocked", status=429, attempts=0)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = None
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ModelEndpointError(f"{self._where}: environment variable {self.api_key_env} is not set; "
                                         "export it with the API key", attempts=0)
            headers["Authorization"] = f"Bearer {key}"
        payload = {"model": self.model, "messages": messages}
        if tools is not None:
            payload["tools"] = tools
        if tool_choice is not None:
            payload["tool_choice"] = tool_choice
        if response_format is not None:
            payload["response_format"] = response_format
        payload["temperature"] = 0
        data = json.dumps(payload).encode("utf-8")
        secrets = tuple(secret_values([self.api_key_env]))

        endpoint = _endpoint(self.base_url)
        # Held through backoff waits too: an endpoint that asked us to back off gets no other request meanwhile.
        with endpoint.lock:
            entered = time.perf_counter()
            try:
                return self._attempts(endpoint, data, headers, secrets)
            finally:
                self._wall_s += time.perf_counter() - entered

    def _interval_left(self, endpoint: _Endpoint) -> float:
        # A start read from another clock (another client's fake clock) says nothing about this one's;
        # and never wait longer than the interval, whatever the clocks say.
        if not self.min_interval_s or endpoint.last_start is None or endpoint.clock != self._clock:
            return 0.0
        return min(self.min_interval_s, max(0.0, endpoint.last_start + self.min_interval_s - self._clock()))

    def _backoff(self, retry: int) -> float:
        if not self.backoff_s:
            return 0.0
        return self.backoff_s[min(retry, len(self.backoff_s) - 1)]

    def _attempts(self, endpoint: _Endpoint, data: bytes, headers: dict, secrets: tuple) -> ChatResponse:
        backoff = 0.0
        for attempt in range(self.retries + 1):
            attempts = attempt + 1
            wait = max(backoff, self._interval_left(endpoint))
            if wait > 0:
                self._sleep(wait)
            endpoint.last_start, endpoint.clock = self._clock(), self._clock
            entry = {"started_at": _utc_now(), "latency_ms": None, "status": None, "error": None,
                     "rate_limited": False, "retry": attempt, "waited_s": round(wait, 3), "retry_after_s": None}
            self.log.append(entry)
            started = time.perf_counter()
            try:
                reply = post_json(self.base_url + "/chat/completions", data, headers, self.timeout_s, self.max_bytes)
            except TransportError as exc:
                entry.update(latency_ms=round((time.perf_counter() - started) * 1000, 1), status=exc.status)
                entry["error"] = redact(_transport_words(exc), secrets)
                raise ModelEndpointError(f"{self._where}: {entry['error']} (not retried)", status=exc.status,
                                         raw=redact(exc.head, secrets), attempts=attempts) from None
            latency_ms = round((time.perf_counter() - started) * 1000, 1)
            status, raw, response_headers = reply.status, redact(reply.text, secrets), reply.headers
            retry_after = _retry_after(response_headers)
            entry.update(latency_ms=latency_ms, status=status, retry_after_s=retry_after)

            if status == 429:
                entry["rate_limited"] = True
                self._consecutive_429s += 1
            else:
                self._consecutive_429s = 0
            if not 200 <= status < 300:
                entry["error"] = f"HTTP {status}"
            if self._consecutive_429s >= BLOCKED_AFTER_429S:
                self.blocked = True
                raise RunBlocked(f"{self._where}: {self._consecutive_429s} consecutive HTTP 429 answers: the endpoint "
                                 "is rate-limiting every request; the run is marked blocked",
                                 status=status, raw=raw, attempts=attempts)
            if status in RETRIED_STATUSES and attempt < self.retries:
                backoff = max(self._backoff(attempt), retry_after or 0.0)
                continue
            if not 200 <= status < 300:
                tried = f" after {attempts} attempts" if attempts > 1 else ""
                raise ModelEndpointError(f"{self._where}: HTTP {status}{tried}: {_excerpt(raw.strip())!r}",
                                         status=status, raw=raw, attempts=attempts)
            return self._parse(status, raw, latency_ms, attempts, entry, secrets)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _parse(self, status: int, raw: str, latency_ms: float, attempts: int, entry: dict,
               secrets: tuple) -> ChatResponse:
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python recurses
            entry["error"] = "invalid JSON"
            raise UnreadableReply(f"{self._where}: invalid JSON in the answer: {_excerpt(raw)!r}",
                                  status=status, raw=raw, attempts=attempts) from None
        choices = body.get("choices") if isinstance(body, dict) else None
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if first is None or not isinstance(first.get("message"), dict):
            entry["error"] = "no choices[0].message"
            raise UnreadableReply(f"{self._where}: the answer has no choices[0].message: {_excerpt(raw)!r}",
                                  status=status, raw=raw, attempts=attempts)
        # The raw text is redacted already; this catches a key that only decoding JSON reassembles.
        body = redact_all(body, secrets)
        first = body["choices"][0]
        finish_reason = first.get("finish_reason")
        return ChatResponse(status=status, body=body, raw=raw,
                            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
                            message=first["message"], latency_ms=latency_ms, attempts=attempts)


def _transport_words(exc: TransportError) -> str:
    """What the request log and the error say when no usable answer came."""
    if exc.kind == "unreachable":
        return f"cannot reach the endpoint: {exc.detail}"
    return exc.detail
