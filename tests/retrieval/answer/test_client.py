"""The chat client against a real scripted server on loopback; only backoff and interval waits are faked."""

import dataclasses
import json
import socket
import threading
import time

import pytest
from chat_server import ChatServer, FakeTime, content, echo_headers, hang, status, tool_call

from assay.retrieval.answer.client import ChatClient, ChatResponse
from assay.core.errors import AssayError, ModelEndpointError, RunBlocked

KEY_ENV = "ASSAY_TEST_MODEL_KEY"
KEY = "sk-model-secret-9f8e7d6c"
MESSAGES = [{"role": "system", "content": "Answer from the passages."},
            {"role": "user", "content": "What is the capital of France?"}]
TOOLS = [{"type": "function",
          "function": {"name": "submit_answer",
                       "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}}}]
LOG_KEYS = {"started_at", "latency_ms", "status", "error", "rate_limited", "retry", "waited_s", "retry_after_s"}


@pytest.fixture(autouse=True)
def loopback(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def fake():
    return FakeTime()


def client_for(server, fake=None, **options):
    if fake is not None:
        options.setdefault("sleep", fake.sleep)
        options.setdefault("clock", fake.clock)
    return ChatClient(server.url, "scripted-model", api_key_env=KEY_ENV, **options)


def test_a_tool_call_answer():
    # the server waits 50 ms before answering, so the latency measured has a floor well above zero
    with ChatServer([dataclasses.replace(tool_call({"answer": "Paris"}), delay_s=0.05)]) as server:
        client = client_for(server)
        began = time.perf_counter()
        response = client.chat(MESSAGES, tools=TOOLS, tool_choice="required",
                               response_format={"type": "json_object"})
        outer_ms = (time.perf_counter() - began) * 1000
    assert isinstance(response, ChatResponse)
    assert (response.status, response.finish_reason, response.attempts) == (200, "tool_calls", 1)
    call = response.message["tool_calls"][0]["function"]
    assert call["name"] == "submit_answer" and json.loads(call["arguments"]) == {"answer": "Paris"}
    assert json.loads(response.raw) == response.body and response.body["usage"]["total_tokens"] == 18
    # the latency is the request's own time: it holds the server's wait and lies within the call around it
    # (intervals nested on one machine; no bound on how long that takes, so a loaded machine cannot fail it)
    [request] = server.requests
    server_ms = (request["finished"] - request["started"]) * 1000
    assert server_ms >= 50 - 1 and server_ms - 0.05 <= response.latency_ms <= outer_ms + 0.05

    assert request["path"] == "/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"] == {"model": "scripted-model", "messages": MESSAGES, "tools": TOOLS,
                               "tool_choice": "required", "response_format": {"type": "json_object"},
                               "temperature": 0}
    [entry] = client.log
    assert set(entry) == LOG_KEYS
    assert entry["status"] == 200 and entry["error"] is None and entry["retry"] == 0 and entry["waited_s"] == 0
    assert entry["started_at"].endswith("+00:00")
    stats = client.stats()
    assert (stats["requests"], stats["retries"], stats["rate_limited"], stats["errors"]) == (1, 0, 0, 0)
    # the wall time spent in requests: this one request, nested between its latency and the call around it
    # (each rounded: wall_s to 1 ms, latency_ms to 0.1 ms)
    assert response.latency_ms / 1000 - 0.00055 <= stats["wall_s"] <= outer_ms / 1000 + 0.0005


def test_optional_fields_are_left_out_and_no_key_means_no_header():
    with ChatServer([content("Paris.")]) as server:
        response = ChatClient(server.url + "/", "m").chat(MESSAGES)
    assert response.message == {"role": "assistant", "content": "Paris."} and response.finish_reason == "stop"
    [request] = server.requests
    assert request["path"] == "/chat/completions"
    assert request["body"] == {"model": "m", "messages": MESSAGES, "temperature": 0}
    assert "Authorization" not in request["headers"]


def test_429_then_success_retries_once_after_5s(fake):
    with ChatServer([status(429), tool_call({"answer": "Paris"})]) as server:
        client = client_for(server, fake)
        response = client.chat(MESSAGES)
    assert response.attempts == 2 and response.status == 200
    assert fake.sleeps == [5.0]
    assert [(e["status"], e["retry"], e["waited_s"], e["rate_limited"]) for e in client.log] == [
        (429, 0, 0, True), (200, 1, 5.0, False)]
    assert client.stats() | {"wall_s": None} == {"requests": 2, "retries": 1, "rate_limited": 1, "errors": 1,
                                                 "wall_s": None}


def test_503_three_times_fails_the_question_after_two_retries(fake):
    with ChatServer([status(503, "overloaded")] * 3 + [content("next question")]) as server:
        client = client_for(server, fake)
        with pytest.raises(ModelEndpointError) as err:
            client.chat(MESSAGES)
        assert not isinstance(err.value, RunBlocked)
        assert (err.value.status, err.value.attempts, err.value.raw) == (503, 3, "overloaded")
        assert "HTTP 503 after 3 attempts: 'overloaded'" in str(err.value)
        assert err.value.exit_code == 5
        assert fake.sleeps == [5.0, 10.0]
        assert [e["waited_s"] for e in client.log] == [0, 5.0, 10.0]
        assert client.chat(MESSAGES).message["content"] == "next question"  # the run goes on
    assert len(server.requests) == 4


def test_three_consecutive_429s_across_questions_block_the_run(fake):
    with ChatServer([status(429)] * 4) as server:
        client = client_for(server, fake, retries=0)
        for _ in range(2):
            with pytest.raises(ModelEndpointError) as err:
                client.chat(MESSAGES)
            assert not isinstance(err.value, RunBlocked) and err.value.status == 429
        with pytest.raises(RunBlocked, match="rate-limiting every request; the run is marked blocked"):
            client.chat(MESSAGES)
        assert client.blocked
        with pytest.raises(RunBlocked):  # a blocked client sends nothing more
            client.chat(MESSAGES)
    assert len(server.requests) == 3 and server.remaining == 1
    assert issubclass(RunBlocked, ModelEndpointError) and RunBlocked.exit_code == 5


def test_three_429s_in_one_question_block_before_the_retries_run_out(fake):
    with ChatServer([status(429)] * 3) as server:
        client = client_for(server, fake)
        with pytest.raises(RunBlocked) as err:
            client.chat(MESSAGES)
    assert err.value.attempts == 3 and fake.sleeps == [5.0, 10.0]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_success_in_between_resets_the_429_count(fake):
    script = [status(429), status(429), content("ok"), status(429), status(429), status(429)]
    with ChatServer(script) as server:
        client = client_for(server, fake, retries=0)
        outcomes = []
        for _ in range(5):
            try:
                outcomes.append(client.chat(MESSAGES).status)
            except ModelEndpointError as exc:
                outcomes.append(type(exc).__name__)
        assert outcomes == ["ModelEndpointError"] * 2 + [200] + ["ModelEndpointError"] * 2
        assert not client.blocked
        with pytest.raises(RunBlocked):
            client.chat(MESSAGES)


def test_a_hang_past_the_timeout_fails_fast_without_retry():
    # the server would answer after 60 s (its shutdown cuts the wait short): the call ending in under half of that
    # shows the timeout ended it, with room for any load; no reply that should come in time is under this timeout
    with ChatServer([hang(60.0), content("never asked")]) as server:
        client = client_for(server, timeout_s=0.5)
        began = time.monotonic()
        with pytest.raises(ModelEndpointError, match=r"timeout after 0\.5s") as err:
            client.chat(MESSAGES)
        took = time.monotonic() - began
        assert err.value.status is None and err.value.attempts == 1
        assert len(server.requests) == 1
        [entry] = client.log
        assert entry["status"] is None and entry["error"] == "timeout after 0.5s"
    assert 0.5 - 0.01 <= took < 30


def test_an_unreachable_endpoint_fails_without_retry(fake):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}", "m", sleep=fake.sleep, clock=fake.clock)
    with pytest.raises(ModelEndpointError, match="cannot reach the endpoint"):
        client.chat(MESSAGES)
    assert len(client.log) == 1 and fake.sleeps == []


def test_other_statuses_quote_200_characters_and_are_not_retried(fake):
    with ChatServer([status(500, "x" * 500), status(401, "bad key")]) as server:
        client = client_for(server, fake)
        with pytest.raises(ModelEndpointError) as err:
            client.chat(MESSAGES)
        assert "HTTP 500: 'xxx" in str(err.value)
        assert "x" * 200 + "...'" in str(err.value) and "x" * 201 not in str(err.value)
        assert err.value.raw == "x" * 500
        with pytest.raises(ModelEndpointError, match="HTTP 401: 'bad key'"):
            client.chat(MESSAGES)
    assert len(server.requests) == 2 and fake.sleeps == []


def test_echoed_headers_never_show_the_key(fake):
    with ChatServer([echo_headers()]) as server:
        client = client_for(server, fake)
        with pytest.raises(ModelEndpointError) as err:
            client.chat(MESSAGES)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # it was sent, and echoed
    message = str(err.value)
    assert "HTTP 400" in message and "Bearer ***" in message
    assert KEY not in message and KEY not in err.value.raw and KEY not in repr(err.value)


def test_a_missing_key_variable_is_named_and_nothing_is_sent(monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with ChatServer([content("ok")]) as server:
        client = client_for(server)
        with pytest.raises(ModelEndpointError, match=f"environment variable {KEY_ENV} is not set"):
            client.chat(MESSAGES)
        assert server.requests == [] and client.log == []
        monkeypatch.setenv(KEY_ENV, "sk-set-later")  # read at call time, not at construction
        client.chat(MESSAGES)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-set-later"


def test_invalid_json_keeps_the_raw_answer():
    with ChatServer([status(200, "not json {{"), status(200, '{"choices": []}')]) as server:
        client = client_for(server)
        with pytest.raises(ModelEndpointError, match="invalid JSON") as err:
            client.chat(MESSAGES)
        assert (err.value.raw, err.value.status) == ("not json {{", 200)
        with pytest.raises(ModelEndpointError, match=r"no choices\[0\]\.message") as err:
            client.chat(MESSAGES)
        assert err.value.raw == '{"choices": []}'
    assert [e["error"] for e in client.log] == ["invalid JSON", "no choices[0].message"]


def test_min_interval_between_request_starts(fake):
    with ChatServer([content("a"), content("b"), content("c"), content("d")]) as server:
        client = client_for(server, fake, min_interval_s=2)
        client.chat(MESSAGES)
        client.chat(MESSAGES)
        fake.now += 1.5
        client.chat(MESSAGES)
        # the interval is the endpoint's: another client of the same URL waits too
        client_for(server, fake, min_interval_s=2).chat(MESSAGES)
    assert [e["waited_s"] for e in client.log] == [0, 2.0, 0.5]
    assert fake.sleeps == [2.0, 0.5, 2.0]


def test_one_request_in_flight_per_endpoint():
    answer = tool_call({"answer": "Paris"})
    with ChatServer([hang(0.3, answer), hang(0.3, answer)]) as server:
        clients = [client_for(server), client_for(server)]
        results, errors = [], []

        def ask(client):
            try:
                results.append(client.chat(MESSAGES))
            except Exception as exc:  # surfaced below, not lost in the thread
                errors.append(exc)

        threads = [threading.Thread(target=ask, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)  # a bound only for a deadlock; 0.6 s of scripted waits end it
    assert errors == [] and len(results) == 2
    first, second = sorted(server.requests, key=lambda r: r["started"])
    assert second["started"] >= first["finished"]


def test_retry_after_is_honoured_when_longer_than_the_backoff(fake):
    script = [status(429, headers={"Retry-After": "30"}), status(503, headers={"Retry-After": "1"}), content("ok")]
    with ChatServer(script) as server:
        client = client_for(server, fake)
        assert client.chat(MESSAGES).attempts == 3
    assert fake.sleeps == [30.0, 10.0]
    assert [e["retry_after_s"] for e in client.log] == [30.0, 1.0, None]
    assert [e["waited_s"] for e in client.log] == [0, 30.0, 10.0]


def test_the_key_is_never_in_the_log_repr_or_errors(fake):
    script = [echo_headers(), status(429, f"limited for Bearer {KEY}"), content("ok"), status(500, KEY), hang(60)]
    with ChatServer(script) as server:
        # the replies that come are read under a timeout no load can reach; only the hang's is short, and it
        # cannot be missed the wrong way (that reply never comes before the server shuts down)
        client = client_for(server, fake, timeout_s=60)
        timed = client_for(server, fake, timeout_s=0.3)
        errors = []
        for asking in (client, client, client, timed):
            try:
                asking.chat(MESSAGES, tools=TOOLS)
            except AssayError as exc:
                errors.append(exc)
    assert len(errors) == 3 and len(server.requests) == 5
    assert "timeout" in str(errors[-1])
    shown = [json.dumps(c.log) for c in (client, timed)] + [repr(client), repr(timed)]
    shown += [json.dumps(c.stats()) for c in (client, timed)]
    shown += [str(e) for e in errors] + [repr(e) for e in errors] + [e.raw or "" for e in errors]
    assert all(KEY not in text for text in shown)
    assert "***" in str(errors[1])


@pytest.mark.parametrize("asked", ["inf", "1e10", "100000", "121"])
def test_a_retry_after_past_the_cap_fails_the_question_at_once(fake, asked):
    # once an OverflowError traceback (inf, 1e10) or a 28-hour sleep (100000)
    with ChatServer([status(429, headers={"Retry-After": asked}), content("never asked for")]) as server:
        client = client_for(server, fake)
        with pytest.raises(ModelEndpointError) as err:
            client.chat(MESSAGES)
    assert fake.sleeps == [] and len(server.requests) == 1 and err.value.attempts == 1
    waits = "forever" if asked == "inf" else f"{float(asked):g}s"
    assert (f"HTTP 429: the endpoint asks to wait {waits} before a retry (Retry-After), more than the "
            "120s one request may wait for its retries (--max-retry-wait, max_retry_wait_s in assay.toml); "
            "not retried") in str(err.value)
    assert client.log[0]["retry_after_s"] == (None if asked == "inf" else float(asked))
    assert not client.blocked


def test_the_cap_bounds_the_waits_of_one_request_in_all(fake):
    script = [status(503, headers={"Retry-After": "50"}), status(503, headers={"Retry-After": "80"}), content("no")]
    with ChatServer(script) as server:
        client = client_for(server, fake)
        with pytest.raises(ModelEndpointError, match=r"asks to wait 80s before a retry \(Retry-After\) after 50s of "
                                                     r"waits already, more than the 120s") as err:
            client.chat(MESSAGES)
    assert fake.sleeps == [50.0] and len(server.requests) == 2 and err.value.attempts == 2
    # the cap is a setting; 0 makes no retry at all, the backoff included
    with ChatServer([status(503), content("no")]) as server:
        with pytest.raises(ModelEndpointError, match=r"the next retry waits 5s, more than the 0s"):
            client_for(server, fake, max_retry_wait_s=0).chat(MESSAGES)
    assert fake.sleeps == [50.0]
