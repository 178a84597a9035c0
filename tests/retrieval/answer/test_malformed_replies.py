"""Every shape a model endpoint can answer in, through a whole run into a real DuckDB warehouse.

Each case scripts a loopback chat-completions server to answer every request of a run in one
malformed shape. The run must complete (no exception), every question that reached the model must
have its answer row (a run whose every question failed is stored as ``failed``), with the status, refusal and failure stage the table says, the problem named,
and an excerpt of what came back (redacted, at most 200 characters) where something came back.
"""

import json

import pytest
from chat_server import ChatServer, Reply, completion, echo_key, huge, raw, redirect, status

from assay.core.credentials import redact
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse

KEY = "sk-malformed-test-KEY-0123456789"
ASKED = ["backup-readers", "cache-size", "page-size", "restore", "wal-purpose"]  # tulips retrieves nothing


def message(msg: dict, finish_reason="tool_calls") -> Reply:
    return Reply(body=json.dumps(completion({"role": "assistant", **msg}, finish_reason)))


def call(function) -> Reply:
    return message({"content": None, "tool_calls": [{"id": "c0", "type": "function", "function": function}]})


def args(arguments) -> Reply:
    return call({"name": "submit_answer", "arguments": arguments})


DEEP = "[" * 500 + "]" * 500
SCHEMA = ("refused", "schema", "schema")            # the reply was a completion, the answer in it was not
UNREADABLE = ("failed", "error", "schema")          # HTTP 200, but not a chat completion at all
TRANSPORT = ("failed", "error", "generation")       # nothing usable was read

CASES = {
    # id: (reply, expected outcome, text expected in parse_errors or error)
    "tool_calls is a string": (message({"content": None, "tool_calls": "submit_answer"}), SCHEMA,
                               "tool_calls must be a list, got str"),
    "tool_calls is a list of strings": (message({"tool_calls": ["submit_answer"]}), SCHEMA,
                                        "no submit_answer tool call in the reply (tool_calls hold: str)"),
    "tool_calls without function": (message({"tool_calls": [{"id": "c0", "type": "function"}]}), SCHEMA,
                                    "tool_calls hold: function null"),
    "function is a string": (call("submit_answer"), SCHEMA, "tool_calls hold: function str"),
    "arguments is a list": (args([{"claims": []}]), SCHEMA,
                            "submit_answer arguments must be a JSON string or an object, got list"),
    "arguments is a number": (args(42), SCHEMA, "got int"),
    "arguments is null": (args(None), SCHEMA, "got null"),
    "arguments is an object, not an answer": (args({"answer": "Paris"}), SCHEMA, "claims: missing"),
    "arguments is invalid JSON": (args('{"claims": [oops'), SCHEMA, "submit_answer arguments are not JSON"),
    "arguments nested too deep": (args("[" * 100_000), SCHEMA,
                                  "submit_answer arguments are JSON nested deeper than 64 levels"),
    # once a RecursionError traceback when the reply was redacted, and nothing stored
    "arguments nested 500 levels": (args('{"claims": ' + DEEP + "}"), SCHEMA,
                                    "submit_answer arguments are JSON nested deeper than 64 levels"),
    "a reply nested 500 levels": (raw('{"choices": [{"message": {"role": "assistant", "content": "x", "deep": '
                                      + DEEP + "}}]}"), UNREADABLE, "the answer is JSON nested deeper than 64 levels"),
    "arguments nested 65 levels": (args('{"claims": ' + "[" * 64 + "]" * 64 + "}"), SCHEMA, "deeper than 64"),
    "arguments with a 5000-digit number": (args('{"claims": ' + "9" * 5000 + "}"), SCHEMA, "not JSON (ValueError)"),
    "claims is a string": (args({"claims": "all of them"}), SCHEMA, "claims: must be a list, got str"),
    "content is a list of numbers": (message({"content": [1, 2]}, "stop"), SCHEMA,
                                     "json-fallback: content must be a string, got list"),
    "content is an object": (message({"content": {"claims": []}}, "stop"), SCHEMA,
                             "json-fallback: content must be a string, got dict"),
    "finish_reason is an object": (message({"content": None}, {"why": "no"}), SCHEMA, "no submit_answer tool call"),
    "choices is null": (raw('{"choices": null}'), UNREADABLE, "no choices[0].message"),
    "choices is a string": (raw('{"choices": "abc"}'), UNREADABLE, "no choices[0].message"),
    "choices is empty": (raw('{"choices": []}'), UNREADABLE, "no choices[0].message"),
    "choices holds strings": (raw('{"choices": ["x"]}'), UNREADABLE, "no choices[0].message"),
    "message is missing": (raw('{"choices": [{"index": 0, "finish_reason": "stop"}]}'), UNREADABLE,
                           "no choices[0].message"),
    "message is a string": (raw('{"choices": [{"message": "Paris"}]}'), UNREADABLE, "no choices[0].message"),
    "body is not JSON": (raw("<html><body>502 Bad Gateway</body></html>", "text/html"), UNREADABLE,
                         "invalid JSON in the answer: '<html>"),
    "body is a JSON array": (raw("[1, 2, 3]"), UNREADABLE, "no choices[0].message"),
    "body is a JSON string": (raw('"ok"'), UNREADABLE, "no choices[0].message"),
    "body is empty": (raw(""), UNREADABLE, "invalid JSON in the answer: ''"),
    "body nested too deep": (raw("[" * 100_000), UNREADABLE, "the answer is JSON nested deeper than 64 levels"),
    "body is 9 MiB": (huge(9 * 1024 * 1024), TRANSPORT, "the answer is larger than 8388608 bytes"),
    "a redirect": (redirect("http://localhost:9/v1/chat/completions"), TRANSPORT,
                   "the endpoint redirected to http://localhost:9 (HTTP 302); assay does not follow redirects"),
    "a 503 asking to wait forever": (status(503, headers={"Retry-After": "inf"}), TRANSPORT,
                                     "HTTP 503: the endpoint asks to wait forever before a retry (Retry-After), more "
                                     "than the 120s one request may wait"),
    "a 503 asking to wait 1e10 s": (status(503, headers={"Retry-After": "1e10"}), TRANSPORT, "not retried"),
    "a 500 that echoes the key": (echo_key(lambda key: json.dumps({"error": f"bad key {key}"}), code=500),
                                  TRANSPORT, "HTTP 500: '{\"error\": \"bad key ***\"}'"),
}


@pytest.fixture(scope="module")
def warehouse_path(tmp_path_factory):
    return tmp_path_factory.mktemp("malformed") / "w.duckdb"


def options(url):
    return RunOptions("bm25", chunk_size=120, generator="openai", generator_base_url=url,
                      generator_model="test-model", generator_api_key_env="ASSAY_TEST_KEY",
                      generator_timeout_s=5, generator_backoff_s=[0.0, 0.0])


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_reply_is_recorded_and_the_run_completes(case, warehouse_path, monkeypatch, mini_corpus,
                                                             mini_judgments):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    reply, expected, problem = CASES[case]
    with ChatServer([reply] * 12) as server:
        with Warehouse.open(warehouse_path) as wh:
            rec = run(wh, mini_corpus, mini_judgments, options(server.url))
            rows = wh.con.execute(
                "SELECT query_id, status, refusal, failure_stage, parse_errors, error, response_excerpt, "
                "finish_reason, http_status FROM answers WHERE run_id = ? ORDER BY query_id", [rec.run_id]).fetchall()
            stored = [v for t in ("answers", "answer_raw", "model_requests", "claims", "citations")
                      for row in wh.con.execute(f"SELECT * FROM {t} WHERE run_id = ?", [rec.run_id]).fetchall()
                      for v in row if isinstance(v, str)]
    # a run whose every question failed is stored as failed (the runner's rule), never lost
    assert rec.status == ("failed" if expected[0] == "failed" else "complete")
    answers = {r[0]: r[1:] for r in rows}
    assert set(answers) == set(ASKED) | {"tulips"}
    for qid in ASKED:
        status_, refusal, stage, parse_errors, error, excerpt, finish_reason, http_status = answers[qid]
        assert (status_, refusal, stage) == expected, qid
        said = parse_errors if expected == SCHEMA else error
        assert problem in said, (qid, said)
        assert finish_reason is None or isinstance(finish_reason, str)
        if reply.body or reply.render:
            assert excerpt and len(excerpt) <= 200
        if case == "a redirect":
            assert http_status == 302
    assert all(redact(v, [KEY]) == v for v in stored)  # no form of the key anywhere


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_content_type_that_lies_is_ignored(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    reply = args({"claims": [], "insufficient_evidence": True})
    reply.content_type = "text/html; charset=latin-1"
    with ChatServer([reply] * 5) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, options(server.url))
            got = wh.con.execute("SELECT DISTINCT status, refusal, failure_stage FROM answers WHERE run_id = ? "
                                 "AND query_id <> 'tulips'", [rec.run_id]).fetchall()
    assert got == [("refused", "insufficient_evidence", "generation")]


@pytest.mark.parametrize("reply, verdict, problem", [
    (message({"content": '{"supported": true}'}, "stop"), "supported", None),
    (message({"content": [{"type": "text", "text": '{"supported": false}'}]}, "stop"), "unsupported", None),
    (message({"content": [1, 2]}, "stop"), "unparsed", "content must be a string, got list"),
    (message({"content": None}, "stop"), "unparsed", "content must be a string, got null"),
    (message({"content": "[true]"}, "stop"), "unparsed", 'expected an object with "supported", got list'),
    (message({"content": '"supported"'}, "stop"), "unparsed", "got str"),
    (message({"content": "{}"}, "stop"), "unparsed", 'expected an object with "supported", got dict'),
    (message({"content": '{"supported": "yes"}'}, "stop"), "unparsed", "'supported' is not true or false"),
    (message({"content": "[" * 100_000}, "stop"), "unparsed", "JSON nested deeper than 64 levels"),
    (message({"content": '{"supported": ' + DEEP + "}"}, "stop"), "unparsed", "JSON nested deeper than 64 levels"),
    (raw('{"choices": [{"message": {"content": "{}", "deep": ' + DEEP + "}}]}"), "unavailable",
     "the answer is JSON nested deeper than 64 levels"),
    (raw('{"choices": "x"}'), "unavailable", "no choices[0].message"),
    (raw("not json"), "unavailable", "invalid JSON"),
    (huge(9 * 1024 * 1024), "unavailable", "larger than"),
    (redirect("http://localhost:9/"), "unavailable", "assay does not follow redirects"),
    (echo_key(lambda key: json.dumps(completion({"role": "assistant", "content": f'{{"supported": "{key}"}}'},
                                                "stop"))), "unparsed", "is not true or false"),
])
def test_the_judge_reads_any_reply_without_raising(reply, verdict, problem, monkeypatch):
    from assay.retrieval.answer.client import ChatClient
    from assay.retrieval.answer.judge import Judge

    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with ChatServer([reply]) as server:
        got, raw_reply, error = Judge(ChatClient(server.url, "judge", api_key_env="ASSAY_TEST_KEY",
                                                 timeout_s=5)).judge("a claim", ["a quote"])
    assert got == verdict
    assert (error is None) if problem is None else (problem in error)
    assert all(redact(v, [KEY]) == v for v in (raw_reply or "", error or ""))
