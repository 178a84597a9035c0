"""The one HTTP layer: every request assay sends (the generator, the judge, the ``http`` retriever) goes
through ``post_json``, on httpx.

What it guarantees, whatever the server does:

- **Redirects are never followed.** A 3xx answer is reported as ``the endpoint redirected to
  <origin>; assay does not follow redirects`` (only the target's origin is shown: its path or query
  may carry a token), so credentials never reach another host, nor the same host by another path.
- **A total deadline.** ``timeout_s`` bounds the whole request, connecting to the last byte: httpx's
  per-phase timeouts are set to it, the clock is checked between body chunks, and a watchdog shuts
  the socket down when the deadline passes, so a server that trickles headers or body one byte a
  second is cut off at the deadline, not after it.
- **A size cap.** At most ``max_bytes`` (8 MiB by default) of body are read, counted while
  streaming: a larger answer is refused without buffering the rest. ``Accept-Encoding: identity``
  is asked for; a server that compresses anyway (gzip or deflate) is decompressed here, at most
  ``INFLATE_CHUNK`` bytes at a time, and counted after decompression, so a small compressed chunk
  that inflates a thousandfold never costs more than the cap and one such piece. Any other
  ``Content-Encoding`` (br, zstd, ...) is refused, naming it.
- The body is decoded as UTF-8 (bad bytes replaced) whatever its Content-Type says.

Proxies come from the usual environment variables (``HTTPS_PROXY``, ``NO_PROXY``), as before.
Failures raise ``TransportError``; callers (the chat client, the HTTP retriever) turn it into their
own ``AssayError`` with their own words, after redacting credentials.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
HEAD_CHARS = 1000
INFLATE_CHUNK = 64 * 1024  # the most bytes one step of decompression may produce


@dataclass
class HttpReply:
    """An HTTP answer read in full: its status, its body as text and its headers (an httpx.Headers)."""

    status: int
    text: str
    headers: object


class TransportError(Exception):
    """No usable answer. ``kind`` is one of ``timeout``, ``unreachable``, ``broken`` (the connection
    failed mid-way, or a compressed body could not be read), ``redirect`` or ``too_large``; ``status`` is the HTTP status when an answer
    began (a redirect, an oversized answer), else None. ``detail`` says what happened, in words
    (for ``unreachable``, the reason alone: the caller names what it could not reach). ``head`` is
    the start of an oversized answer (at most ``HEAD_CHARS`` characters), so it can be quoted."""

    def __init__(self, kind: str, detail: str, status: int | None = None, head: str | None = None):
        self.kind, self.detail, self.status, self.head = kind, detail, status, head
        super().__init__(detail)


class _Inflater:
    """Decompresses a gzip or deflate body in steps of at most ``INFLATE_CHUNK`` bytes (httpx's own decoder
    inflates each network chunk whole: a 64 KiB chunk of a gzip bomb is 64 MiB at once). Several gzip
    members one after another are read as one body, as gzip reads them."""

    def __init__(self, encoding: str):
        import zlib

        self._zlib = zlib
        # gzip (and x-gzip) carry a gzip header; "deflate" is meant to be zlib-wrapped, sent raw by some servers
        self._wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._raw_fallback = self._wbits == zlib.MAX_WBITS
        self._d = zlib.decompressobj(self._wbits)
        self._started = False

    def feed(self, data: bytes):
        """The decompressed pieces of ``data``, each at most INFLATE_CHUNK bytes."""
        pending = data
        while pending:
            try:
                out = self._d.decompress(pending, INFLATE_CHUNK)
            except self._zlib.error as exc:
                if self._raw_fallback and not self._started:  # a raw deflate stream, no zlib header
                    self._raw_fallback = False
                    self._d = self._zlib.decompressobj(-self._zlib.MAX_WBITS)
                    continue
                raise TransportError("broken", f"the answer's compressed body is damaged: {exc}") from None
            self._started = True
            if out:
                yield out
            if self._d.unconsumed_tail:
                pending = self._d.unconsumed_tail
            elif self._d.eof and self._d.unused_data:  # another gzip member follows
                pending = self._d.unused_data
                self._d = self._zlib.decompressobj(self._wbits)
            else:
                pending = b""


def _inflater(headers) -> _Inflater | None:
    encoding = (headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Inflater(encoding)
    raise TransportError("broken", f"the answer is encoded as {encoding!r}, which assay does not read (it asks for "
                                   "identity, and reads gzip and deflate)")


def origin(url) -> str:
    """scheme://host[:port] of an httpx.URL."""
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}"


class _Watchdog:
    """Shuts the request's socket down at the deadline: a blocked read then returns at once.

    httpcore reports each connection it opens through the ``trace`` request extension; that is how
    the socket is found without reaching into httpx's internals."""

    def __init__(self, seconds: float):
        self.fired = False
        self._streams: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict) -> None:
        if event.endswith(("connect_tcp.complete", "start_tls.complete")) and info.get("return_value") is not None:
            with self._lock:
                self._streams.append(info["return_value"])
                fired = self.fired
            if fired:
                self._shutdown(info["return_value"])

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            streams = list(self._streams)
        for stream in streams:
            self._shutdown(stream)

    @staticmethod
    def _shutdown(stream) -> None:
        sock = stream.get_extra_info("socket")
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError, ValueError):
            pass

    def cancel(self) -> None:
        self._timer.cancel()


def post_json(url: str, body: bytes, headers: dict, timeout_s: float,
              max_bytes: int = DEFAULT_MAX_BYTES) -> HttpReply:
    """POST ``body`` (JSON bytes) to ``url`` and read the answer, whatever its status, within
    ``timeout_s`` seconds in all and ``max_bytes`` of body; see the module docstring."""
    import httpx

    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "Accept-Encoding": "identity", **headers}
    deadline = time.monotonic() + timeout_s
    timed_out = TransportError("timeout", f"timeout after {timeout_s:g}s")
    watchdog = _Watchdog(timeout_s)
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False) as client:
            with client.stream("POST", url, content=body, headers=headers,
                               extensions={"trace": watchdog.trace}) as response:
                status = response.status_code
                if 300 <= status < 400:
                    location = response.headers.get("Location")
                    target = origin(response.url.join(location)) if location else "nowhere (no Location)"
                    raise TransportError("redirect", f"the endpoint redirected to {target} (HTTP {status}); "
                                                     "assay does not follow redirects", status)
                too_large = TransportError("too_large", f"the answer is larger than {max_bytes} bytes; "
                                                        "assay stopped reading it", status)
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise too_large
                data = bytearray()
                inflater = _inflater(response.headers)
                for raw in response.iter_raw():
                    for chunk in (raw,) if inflater is None else inflater.feed(raw):
                        data += chunk
                        if len(data) > max_bytes:
                            too_large.head = data[:4 * HEAD_CHARS].decode("utf-8", errors="replace")[:HEAD_CHARS]
                            raise too_large
                    if time.monotonic() > deadline:
                        raise timed_out
                return HttpReply(status, data.decode("utf-8", errors="replace"), response.headers)
    except TransportError:
        raise
    except httpx.InvalidURL as exc:
        raise TransportError("unreachable", f"invalid URL: {exc}") from None
    except httpx.TimeoutException:
        raise timed_out from None
    except (httpx.HTTPError, OSError) as exc:
        if watchdog.fired or time.monotonic() > deadline:
            raise timed_out from None
        if isinstance(exc, (httpx.ConnectError, httpx.UnsupportedProtocol)):
            raise TransportError("unreachable", str(exc) or type(exc).__name__) from None
        raise TransportError("broken", f"no answer: {type(exc).__name__}: {exc}") from None
    finally:
        watchdog.cancel()
