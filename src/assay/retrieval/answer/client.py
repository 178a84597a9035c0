"""A careful client for any OpenAI-compatible chat-completions endpoint.

Careful means, per endpoint (every client with the same ``base_url``):

- one request in flight at a time, and at least ``min_interval_s`` between request starts;
- HTTP 429 and 503 retried ``retries`` times, waiting ``backoff_s`` (5 s, then 10 s), or longer
  when the answer's ``Retry-After`` header (seconds) asks for more; but one request never waits more
  than ``max_retry_wait_s`` (120 s) for its retries in all: a retry that would wait past it is not
  made, and the question fails at once saying what the endpoint asked for (``Retry-After: inf`` too);
- three consecutive 429 answers over the client's life stop the run with ``RunBlocked``;
- a timeout or an unreachable host fails the question at once: retrying a model that did not
  answer within ``timeout_s`` doubles the cost of every slow question and rarely helps;
- ``timeout_s`` is a total deadline per request, ``max_bytes`` caps an answer's body, and a
  redirect is never followed (the key stays with the configured origin): see ``assay.core.http``;
- credentials in the base URL (its userinfo, its query) are shown as ``***`` in every error, ``repr`` and
  configuration, and redacted from replies as the key is;
- the API key is read from the environment at call time and never appears in an error, the
  request log, a reply's text or parsed body, or ``repr``, even when a server echoes it back raw,
  JSON-escaped or URL-encoded (``assay.core.credentials.redact``; every other credential-named variable
  of assay's environment is redacted as well);
- an HTTP 2xx answer that is not a chat completion (not JSON, JSON nested deeper than
  ``limits.JSON_DEPTH`` levels, no ``choices[0].message`` object) raises ``UnreadableReply``, a ``ModelEndpointError`` whose ``raw`` keeps the redacted text.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from assay.core import jsonin
from assay.core.credentials import read_key, redact, redact_all, redact_url, secret_values, url_secrets
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
    # Only the delay-seconds form; an HTTP-date (or NaN) is ignored and the backoff applies. "inf" and
    # "1e10" are numbers: they come back as such, and the retry cap (max_retry_wait_s) refuses them.
    value = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None  # NaN compares false


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
                 sleep=time.sleep, clock=time.monotonic, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_retry_wait_s: float = 120.0, excerpt_chars: int = EXCERPT_CHARS):
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
        if not 0 <= max_retry_wait_s < float("inf"):
            raise ConfigError(f"model endpoint retry wait limit must be a finite number of seconds, "
                              f"got {max_retry_wait_s}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.min_interval_s = min_interval_s
        self.retries = retries
        self.backoff_s = tuple(backoff_s)
        self.max_bytes = max_bytes
        self.max_retry_wait_s = max_retry_wait_s
        self.excerpt_chars = excerpt_chars  # of a reply, quoted in an error; 0 quotes none (max_reply_chars = 0)
        self.log: list[dict] = []
        self.blocked = False
        self._sleep = sleep
        self._clock = clock
        self._consecutive_429s = 0
        self._wall_s = 0.0
        self.shown_url = redact_url(self.base_url)  # what errors, repr and the stored config show
        self._where = f"model endpoint {terminal(self.shown_url)} ({terminal(model)})"
        read_key(api_key_env, self._where)  # a key no header can carry is refused before any question is asked

    def __repr__(self) -> str:
        return (f"ChatClient(base_url={self.shown_url!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r})")

    def _quote(self, text: str) -> str:
        if not self.excerpt_chars:
            return "(reply text not kept: max_reply_chars is 0)"
        return repr(_excerpt(text, self.excerpt_chars))

    def secrets(self) -> tuple:
        """What is redacted from every reply and error: the key's value, every credential-named variable's, and
        the credentials the base URL carries (assay.core.credentials.url_secrets)."""
        return tuple(secret_values([self.api_key_env]) + url_secrets(self.base_url))

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
            key = read_key(self.api_key_env, self._where)
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
        secrets = self.secrets()

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
        waited = 0.0  # seconds of backoff this request has waited for its retries
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
            # an infinite Retry-After is in the error's words; the log keeps numbers JSON can write
            entry.update(latency_ms=latency_ms, status=status,
                         retry_after_s=retry_after if retry_after is None or math.isfinite(retry_after) else None)

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
                if waited + backoff > self.max_retry_wait_s:
                    entry["error"] = f"HTTP {status}: retry wait over max_retry_wait_s"
                    raise ModelEndpointError(self._over_wait(status, backoff, retry_after, waited, raw),
                                             status=status, raw=raw, attempts=attempts)
                waited += backoff
                continue
            if not 200 <= status < 300:
                tried = f" after {attempts} attempts" if attempts > 1 else ""
                raise ModelEndpointError(f"{self._where}: HTTP {status}{tried}: {self._quote(raw.strip())}",
                                         status=status, raw=raw, attempts=attempts)
            return self._parse(status, raw, latency_ms, attempts, entry, secrets)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _over_wait(self, status: int, backoff: float, retry_after: float | None, waited: float, raw: str) -> str:
        wait = f"{retry_after:g}s" if retry_after is not None and math.isfinite(retry_after) else "forever"
        asked = (f"the endpoint asks to wait {wait} before a retry (Retry-After)"
                 if retry_after is not None and retry_after >= backoff else f"the next retry waits {backoff:g}s")
        before = f" after {waited:g}s of waits already" if waited else ""
        return (f"{self._where}: HTTP {status}: {asked}{before}, more than the {self.max_retry_wait_s:g}s one "
                "request may wait for its retries (--max-retry-wait, max_retry_wait_s in assay.toml); not "
                f"retried: {self._quote(raw.strip())}")

    def _parse(self, status: int, raw: str, latency_ms: float, attempts: int, entry: dict,
               secrets: tuple) -> ChatResponse:
        try:
            body = jsonin.loads(raw)
        except jsonin.TooDeep as exc:  # parsed, it would exhaust the recursion of what reads it next
            entry["error"] = "JSON nested too deep"
            raise UnreadableReply(f"{self._where}: the answer is {exc}: {self._quote(raw)}",
                                  status=status, raw=raw, attempts=attempts) from None
        except ValueError:
            entry["error"] = "invalid JSON"
            raise UnreadableReply(f"{self._where}: invalid JSON in the answer: {self._quote(raw)}",
                                  status=status, raw=raw, attempts=attempts) from None
        choices = body.get("choices") if isinstance(body, dict) else None
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if first is None or not isinstance(first.get("message"), dict):
            entry["error"] = "no choices[0].message"
            raise UnreadableReply(f"{self._where}: the answer has no choices[0].message: {self._quote(raw)}",
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
