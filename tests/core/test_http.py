"""The HTTP layer against a real scripted server on loopback: redirects, trickles, huge answers."""

import json
import time
import tracemalloc

import pytest
from retrieval.answer.chat_server import ChatServer, content, encoded, huge, raw, redirect, status, trickle

from assay.core.http import TransportError, post_json

BODY = json.dumps({"model": "m", "messages": []}).encode()
SECRET = {"Authorization": "Bearer sk-http-layer-secret"}


@pytest.fixture(autouse=True)
def loopback(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def test_an_answer_of_any_status_and_content_type_is_read():
    with ChatServer([content("hi"), status(503, "busy"), raw('{"a": 1}', content_type="text/html")]) as server:
        url = server.url + "/chat/completions"
        ok, busy, html = (post_json(url, BODY, SECRET, timeout_s=5) for _ in range(3))
    assert ok.status == 200 and json.loads(ok.text)["choices"][0]["message"]["content"] == "hi"
    assert (busy.status, busy.text) == (503, "busy") and html.text == '{"a": 1}'
    assert server.requests[0]["headers"]["Accept-Encoding"] == "identity"


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_never_followed_so_the_key_never_reaches_the_other_origin(code):
    with ChatServer([content("the other origin")], path=None) as other:
        with ChatServer([redirect(other.url + "/steal?token=x", code)]) as server:
            with pytest.raises(TransportError) as err:
                post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=5)
        assert other.requests == []
    assert (err.value.kind, err.value.status) == ("redirect", code)
    assert str(err.value) == (f"the endpoint redirected to {other.url} (HTTP {code}); "
                              "assay does not follow redirects")  # the origin only: no path, no token


def test_a_same_origin_redirect_is_not_followed_either():
    with ChatServer([redirect("/elsewhere"), content("never")], path=None) as server:
        with pytest.raises(TransportError, match=f"redirected to {server.url} \\(HTTP 302\\)"):
            post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=5)
        assert len(server.requests) == 1


@pytest.mark.parametrize("what", ["headers", "body"])
def test_a_trickle_ends_at_the_deadline(what):
    # 1 byte every 0.1 s: each read succeeds well within any per-read timeout, the total is what is bounded
    # "headers": the whole answer trickles, so no response exists yet and only the watchdog's socket
    # shutdown can end it; "body": status line and headers at once, then the body trickles
    # (over 600 bytes: the whole answer would take more than 60 s)
    with ChatServer([trickle(content("x" * 600), 0.1, body_only=what == "body")]) as server:
        began = time.monotonic()
        with pytest.raises(TransportError) as err:
            post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=1.0)
        took = time.monotonic() - began
    assert err.value.kind == "timeout" and str(err.value) == "timeout after 1s"
    # not before the deadline, and long before the answer could have ended: only the deadline ended it,
    # with room for any load
    assert 0.9 <= took < 30


def test_a_declared_huge_answer_is_refused_before_its_body_is_read():
    with ChatServer([huge(200 * 1024 * 1024, declared=True)]) as server:
        with pytest.raises(TransportError) as err:
            post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=10, max_bytes=1024 * 1024)
    assert (err.value.kind, err.value.status) == ("too_large", 200)
    assert "larger than 1048576 bytes; assay stopped reading it" in str(err.value)
    assert server.written < 50 * 1024 * 1024


def test_an_undeclared_huge_answer_is_cut_while_streaming_without_buffering_it():
    import httpx  # noqa: F401  (imported before memory is measured: importing it allocates more than the cap)

    cap = 1024 * 1024
    with ChatServer([huge(200 * 1024 * 1024)]) as server:
        tracemalloc.start()
        try:
            with pytest.raises(TransportError) as err:
                post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=10, max_bytes=cap)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert err.value.kind == "too_large" and err.value.head.startswith('{"choices"') and len(err.value.head) == 1000
    assert peak < 4 * cap  # what was read is at most the cap and one chunk, and nothing is copied twice
    assert server.written < 50 * 1024 * 1024  # the server was cut off long before its 200 MB


def _gzip(data: bytes, members: int = 1) -> bytes:
    import gzip

    return b"".join(gzip.compress(data, compresslevel=9) for _ in range(members))


def test_a_compressed_answer_is_read_whatever_assay_asked_for():
    import zlib

    text = json.dumps({"choices": [{"message": {"content": "ok " * 5000}}]})
    deflated = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    replies = [encoded(_gzip(text.encode()), "gzip"), encoded(zlib.compress(text.encode()), "deflate"),
               encoded(deflated.compress(text.encode()) + deflated.flush(), "deflate"),  # raw deflate, as some send
               encoded(_gzip(text.encode()[:100]) + _gzip(text.encode()[100:]), "gzip")]  # two members
    with ChatServer(replies) as server:
        for _ in replies:
            assert post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=5).text == text


def test_a_gzip_bomb_is_cut_at_the_cap_without_inflating_a_chunk_whole():
    # once: the cap held, but httpx inflated each network chunk whole: ~130 MB for one 128 KiB chunk
    import httpx  # noqa: F401  (imported before memory is measured)

    cap = 1024 * 1024
    bomb = _gzip(b"\0" * (64 * 1024 * 1024))  # 64 MiB of zeros in about 64 KiB: one or two network chunks
    assert len(bomb) < 128 * 1024
    with ChatServer([encoded(bomb, "gzip")]) as server:
        tracemalloc.start()
        try:
            with pytest.raises(TransportError) as err:
                post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=30, max_bytes=cap)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert (err.value.kind, err.value.status) == ("too_large", 200)
    assert peak < 4 * cap  # the cap, one step of at most 64 KiB, and what the reads hold: never a chunk inflated


def test_an_encoding_assay_cannot_read_is_refused_naming_it():
    with ChatServer([encoded(b"\x1b\x00\x00", "br"), encoded(b"not gzip at all", "gzip")]) as server:
        with pytest.raises(TransportError, match=r"the answer is encoded as 'br', which assay does not read"):
            post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=5)
        with pytest.raises(TransportError, match="the answer's compressed body is damaged"):
            post_json(server.url + "/chat/completions", BODY, SECRET, timeout_s=5)


def test_an_unreachable_host_and_a_bad_url():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(TransportError) as err:
        post_json(f"http://127.0.0.1:{port}/x", BODY, {}, timeout_s=2)
    assert err.value.kind == "unreachable" and err.value.status is None
    with pytest.raises(TransportError) as err:
        post_json("ftp://127.0.0.1/x", BODY, {}, timeout_s=2)
    assert err.value.kind == "unreachable"
