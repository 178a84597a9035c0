"""External retrievers against real things: a subprocess, an HTTP server on loopback, a run file, an entry point."""

import importlib
import json
import os
import socket
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assay.core.credentials import redact
from assay.core.credentials import CHILD_ENV_ALLOWED
from assay.core.errors import ConfigError, RetrieverError
from assay.retrieval import Hit
from assay.retrieval.external import (
    CallableRetriever,
    CommandRetriever,
    HttpRetriever,
    TrecRunRetriever,
    load_plugin,
    parse_results,
    plugin_names,
    plugin_retriever,
)

DOCS = {"a.md": 100, "b.md": 50, "c.md": 20, "d.md": 10}
SLOW_S = 60  # how long the test server's /slow endpoint takes to answer


# parse_results ------------------------------------------------------------------------------

def test_every_result_form_in_the_given_order():
    raw = [
        {"doc_id": "c.md", "score": 0.1},                 # lower score first: the system's order is kept
        "a.md",                                           # whole document, no score
        {"doc_id": "b.md", "start": 10, "end": 20, "score": 0.7},
        {"chunk_id": "a.md#5-9", "score": 0.5},
        "d.md#0-4",                                       # a bare chunk id
        {"doc_id": "b.md"},
        "a.md",                                           # duplicate: dropped
        {"chunk_id": "b.md#10-20", "score": 9.0},         # duplicate of the span above: dropped
    ]
    assert parse_results(raw, DOCS, "here") == [
        Hit("c.md#0-20", "c.md", 0.1),
        Hit("a.md#0-100", "a.md", -2.0),
        Hit("b.md#10-20", "b.md", 0.7),
        Hit("a.md#5-9", "a.md", 0.5),
        Hit("d.md#0-4", "d.md", -5.0),
        Hit("b.md#0-50", "b.md", -6.0),
    ]


def test_missing_scores_fall_with_position():
    hits = parse_results(["b.md", "a.md", "d.md", "c.md"], DOCS, "here")
    assert [h.doc_id for h in hits] == ["b.md", "a.md", "d.md", "c.md"]
    assert [h.score for h in hits] == [-1.0, -2.0, -3.0, -4.0]
    assert parse_results([], DOCS, "here") == []


def test_python_pairs_and_integer_scores():
    hits = parse_results([("a.md", 3), ("b.md#1-2", 2.5)], DOCS, "here")
    assert hits == [Hit("a.md#0-100", "a.md", 3.0), Hit("b.md#1-2", "b.md", 2.5)]


@pytest.mark.parametrize("raw, message", [
    ({"results": ["a.md"]}, "expected a list of results, got dict"),
    ("a.md", "expected a list of results, got str"),
    (None, "expected a list of results, got NoneType"),
    (["a.md", "zzz.md"], "result 2: unknown document id 'zzz.md'"),
    ([{"doc_id": "zzz.md", "score": 1}], "unknown document id 'zzz.md'"),
    ([{"chunk_id": "zzz.md#0-5"}], "unknown document id 'zzz.md'"),
    (["zzz.md#0-5"], "unknown document id 'zzz.md'"),
    ([{"doc_id": 7}], "unknown document id 7"),
    ([{"doc_id": "a.md", "start": 10, "end": 5}], "bad span [10, 5) for 'a.md'"),
    ([{"doc_id": "a.md", "start": 5, "end": 5}], "bad span [5, 5)"),
    ([{"doc_id": "c.md", "start": 0, "end": 21}], "end <= 20"),
    ([{"doc_id": "a.md", "start": -1, "end": 5}], "bad span [-1, 5)"),
    ([{"doc_id": "a.md", "start": 5}], "bad span [5, None)"),
    ([{"doc_id": "a.md", "start": 0.0, "end": 5}], "bad span [0.0, 5)"),
    (["a.md#9-3"], "bad span [9, 3)"),
    ([{"chunk_id": "a.md#1-x"}], "chunk_id 'a.md#1-x' is not of the form"),
    ([{"chunk_id": "a.md#1-5", "doc_id": "a.md"}], "either chunk_id or doc_id"),
    ([{"score": 1.0}], "needs doc_id or chunk_id"),
    ([{"doc_id": "a.md", "score": "high"}], "score must be a finite number, got 'high'"),
    ([{"doc_id": "a.md", "score": float("nan")}], "score must be a finite number"),
    ([{"doc_id": "a.md", "score": True}], "score must be a finite number, got True"),
    ([42], "a result must be a document id or an object, got 42"),
])
def test_invalid_results_name_the_problem_and_where(raw, message):
    with pytest.raises(RetrieverError) as err:
        parse_results(raw, DOCS, "system X (query q7)")
    assert str(err.value).startswith("system X (query q7)")
    assert message in str(err.value)


# CallableRetriever --------------------------------------------------------------------------

def test_callable_retriever():
    calls = []

    def lookup(question, limit):
        calls.append((question, limit))
        return [("b.md", 2.0), ("a.md", 1.0), {"doc_id": "c.md", "start": 0, "end": 4}]

    r = CallableRetriever(lookup, DOCS)
    assert r.search("where?", 2) == [Hit("b.md#0-50", "b.md", 2.0), Hit("a.md#0-100", "a.md", 1.0)]
    assert calls == [("where?", 2)]
    assert r.search("where?", 0) == []
    assert r.config() == {"name": "lookup", "kind": "callable", "function": f"{__name__}.{lookup.__qualname__}"}
    assert CallableRetriever(lookup, DOCS, name="mine").config()["name"] == "mine"


def test_callable_errors_carry_the_question():
    def broken(question, limit):
        raise ValueError("index not loaded")

    r = CallableRetriever(broken, DOCS)
    with pytest.raises(RetrieverError, match=r"retriever 'broken' \(question 'how do I rotate keys\?'\): "
                                             r"ValueError: index not loaded"):
        r.search("how do I rotate keys?", 5)
    with pytest.raises(RetrieverError, match="unknown document id 'nope'"):
        CallableRetriever(lambda q, n: ["nope"], DOCS).search("q", 5)


# CommandRetriever ---------------------------------------------------------------------------

SERVER_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    log = open(sys.argv[1], "a")
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        req = json.loads(line)
        log.write(line); log.flush()
        q = req["query"]
        if q == "hang":
            time.sleep(60)
        elif q == "crash":
            sys.stderr.write("x" * 600 + "fatal: index missing\\n"); sys.stderr.flush()
            sys.exit(3)
        elif q.startswith("long "):  # one line of that many characters: a JSON list of one document id
            n = int(q.split()[1])
            print('["a.md"' + " " * (n - 8) + "]", flush=True)
        elif q == "deep":
            print("[" * 500 + "]" * 500, flush=True)
        elif q == "junk":
            print("Loading model weights... " + "." * 300, flush=True)
        elif q == "wrapped":
            print(json.dumps({"results": [{"doc_id": "b.md", "score": 2.0}, "c.md"]}), flush=True)
        elif q == "pid":
            print(json.dumps([{"doc_id": "a.md", "score": os.getpid()}]), flush=True)
        elif q == "unknown":
            print(json.dumps(["a.md", "ghost.md"]), flush=True)
        else:
            print(json.dumps(["a.md", {"chunk_id": "b.md#10-20", "score": 0.5}, "c.md", "d.md"]), flush=True)
""")


@pytest.fixture
def program(tmp_path):
    script = tmp_path / "answer.py"
    script.write_text(SERVER_SCRIPT)
    log = tmp_path / "requests.jsonl"
    opened = []

    def start(timeout_s=5.0, **options):
        r = CommandRetriever([sys.executable, str(script), str(log)], DOCS, timeout_s=timeout_s, name="answerer",
                             **options)
        opened.append(r)
        return r

    start.log = log
    yield start
    for r in opened:
        r.close()


def test_command_answers_line_by_line_from_one_process(program):
    r = program()
    assert r.search("anything", 3, query_id="q1") == [
        Hit("a.md#0-100", "a.md", -1.0), Hit("b.md#10-20", "b.md", 0.5), Hit("c.md#0-20", "c.md", -3.0)]
    assert r.search("wrapped", 10) == [Hit("b.md#0-50", "b.md", 2.0), Hit("c.md#0-20", "c.md", -2.0)]
    first, second = r.search("pid", 1), r.search("pid", 1)
    assert first == second  # the same process answered both
    requests = [json.loads(line) for line in program.log.read_text().splitlines()]
    assert requests[:2] == [{"query_id": "q1", "query": "anything", "limit": 3},
                            {"query_id": None, "query": "wrapped", "limit": 10}]
    assert r.config() == {"name": "answerer", "kind": "command", "argv": r.argv}
    with pytest.raises(RetrieverError, match=r"command 'answerer' \(query q9, question 'unknown'\), result 2: "
                                             "unknown document id 'ghost.md'"):
        r.search("unknown", 5, query_id="q9")
    assert r.search("again", 1) == [Hit("a.md#0-100", "a.md", -1.0)]  # bad results do not stop the program
    r.close()
    assert r._proc.poll() is not None


def test_command_that_hangs_times_out_and_is_stopped(program):
    r = program(timeout_s=1)
    started = time.monotonic()
    with pytest.raises(RetrieverError, match=r"command 'answerer' \(question 'hang'\): no answer within 1s"):
        r.search("hang", 5)
    # the program sleeps 60 s on 'hang': ending in under half of that proves the timeout, under any load
    assert 1 - 0.01 <= time.monotonic() - started < 30
    assert r._proc.poll() is not None
    with pytest.raises(RetrieverError, match="stopped after an earlier error: .*no answer within 1s"):
        r.search("anything", 5)


def test_command_that_crashes_reports_exit_code_and_stderr(program):
    r = program()
    with pytest.raises(RetrieverError) as err:
        r.search("crash", 5)
    message = str(err.value)
    assert "exited with code 3 before answering" in message
    assert message.endswith("fatal: index missing")
    assert "x" * 500 not in message  # only the last 500 characters of stderr


def test_command_that_prints_something_else_than_json(program):
    r = program()
    with pytest.raises(RetrieverError) as err:
        r.search("junk", 5)
    assert "answered with a line that is not JSON: 'Loading model weights... ...." in str(err.value)
    assert "." * 200 not in str(err.value)  # quotes the first 200 characters only


def test_command_that_answers_json_nested_500_levels_is_stopped(program):
    r = program()
    with pytest.raises(RetrieverError, match=r"command 'answerer' \(question 'deep'\): answered with JSON nested "
                                             r"deeper than 64 levels: '\[\[\["):
        r.search("deep", 5)
    assert r._proc.poll() is not None


def test_command_reply_lines_are_capped_at_8_mi_characters(program):
    # once: a 42 MB line was read whole and accepted
    r = program(timeout_s=60)
    assert r.max_line_chars == 8 * 1024 * 1024
    with pytest.raises(RetrieverError) as err:
        r.search("long 42000000", 5)
    assert str(err.value).startswith("command 'answerer' (question 'long 42000000'): answered with a line longer "
                                     "than 8388608 characters, the most assay reads of one answer; it begins: "
                                     "'[\"a.md\"   ")
    assert r._proc.poll() is not None
    with pytest.raises(RetrieverError, match="stopped after an earlier error: .*longer than 8388608 characters"):
        r.search("anything", 5)
    # the limit is the line's characters, its newline aside
    exact = program(max_line_chars=1000)
    assert exact.search("long 1000", 5)[0].doc_id == "a.md"
    with pytest.raises(RetrieverError, match="longer than 1000 characters"):
        exact.search("long 1001", 5)


def test_command_that_cannot_start(tmp_path):
    with pytest.raises(RetrieverError, match="cannot start"):
        CommandRetriever([str(tmp_path / "no-such-program")], DOCS)


# HttpRetriever ------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body: str):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append((self.path, dict(self.headers), body))
        if self.path == "/list":
            self._send(200, json.dumps([{"doc_id": "b.md", "score": 3.0}, {"chunk_id": "a.md#0-10", "score": 1.0}]))
        elif self.path == "/wrapped":
            self._send(200, json.dumps({"results": ["c.md", "a.md"]}))
        elif self.path == "/error":  # a careless server that echoes the credentials back
            self._send(500, "internal error; auth was " + str(self.headers.get("Authorization")) + " " + "z" * 300)
        elif self.path == "/not-json":
            self._send(200, "<html>gateway</html>")
        elif self.path == "/slow":  # answers after a minute, or when the test ends (the fixture releases it)
            self.server.released.wait(SLOW_S)
            try:
                self._send(200, "[]")
            except OSError:
                pass
        else:
            self._send(404, "no such endpoint")


@pytest.fixture
def http_server(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.received, server.released = [], threading.Event()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.released.set()
    server.shutdown()
    server.server_close()


def test_http_answers(http_server):
    r = HttpRetriever(http_server.base + "/list", DOCS)
    assert r.search("where?", 5, query_id="q3") == [Hit("b.md#0-50", "b.md", 3.0), Hit("a.md#0-10", "a.md", 1.0)]
    assert r.search("where?", 1) == [Hit("b.md#0-50", "b.md", 3.0)]
    path, headers, body = http_server.received[0]
    assert body == {"query_id": "q3", "query": "where?", "limit": 5}
    assert headers["Content-Type"] == "application/json"
    assert "Authorization" not in headers
    wrapped = HttpRetriever(http_server.base + "/wrapped", DOCS)
    assert [h.chunk_id for h in wrapped.search("q", 5)] == ["c.md#0-20", "a.md#0-100"]


def test_http_sends_the_key_and_never_shows_it(http_server, monkeypatch):
    monkeypatch.setenv("ASSAY_TEST_API_KEY", "sk-very-secret-123")
    r = HttpRetriever(http_server.base + "/list", DOCS, api_key_env="ASSAY_TEST_API_KEY",
                      headers={"X-Tenant": "t-42"})
    r.search("q", 5)
    headers = http_server.received[-1][1]
    assert headers["Authorization"] == "Bearer sk-very-secret-123"
    assert headers["X-Tenant"] == "t-42"
    config = r.config()
    assert "sk-very-secret-123" not in json.dumps(config) and "t-42" not in json.dumps(config)
    assert config["api_key_env"] == "ASSAY_TEST_API_KEY"

    failing = HttpRetriever(http_server.base + "/error", DOCS, api_key_env="ASSAY_TEST_API_KEY")
    with pytest.raises(RetrieverError) as err:
        failing.search("q", 5)
    assert "sk-very-secret-123" not in str(err.value)
    assert "auth was Bearer ***" in str(err.value)


def test_http_missing_key_variable(http_server, monkeypatch):
    monkeypatch.delenv("ASSAY_TEST_API_KEY", raising=False)
    with pytest.raises(RetrieverError, match="environment variable ASSAY_TEST_API_KEY is not set"):
        HttpRetriever(http_server.base + "/list", DOCS, api_key_env="ASSAY_TEST_API_KEY")


@pytest.mark.parametrize("key, problem", [("sk-very-secret-123\n", "has whitespace around the key"),
                                          ("sk-véry-secret-123", "holds a character that is not ASCII")])
def test_http_a_key_no_header_can_carry_is_refused_before_any_request(http_server, monkeypatch, key, problem):
    monkeypatch.setenv("ASSAY_TEST_API_KEY", key)
    with pytest.raises(ConfigError) as err:
        HttpRetriever(http_server.base + "/list", DOCS, api_key_env="ASSAY_TEST_API_KEY")
    assert str(err.value).startswith(f"HTTP retriever {http_server.base}/list: environment variable "
                                     f"ASSAY_TEST_API_KEY {problem}")
    assert key.strip() not in str(err.value) and http_server.received == []


def test_http_status_error_quotes_the_body(http_server):
    url = http_server.base + "/error"
    with pytest.raises(RetrieverError) as err:
        HttpRetriever(url, DOCS).search("q", 5)
    message = str(err.value)
    assert message.startswith(f"HTTP retriever {url} (question 'q'): HTTP status 500: internal error; auth was None")
    assert "z" * 200 not in message  # the first 200 characters of the body only


def test_http_invalid_json(http_server):
    url = http_server.base + "/not-json"
    with pytest.raises(RetrieverError, match=f"HTTP retriever {url} .*the answer is not JSON: '<html>gateway</html>'"):
        HttpRetriever(url, DOCS).search("q", 5)


def test_http_slow_reply_times_out(http_server):
    url = http_server.base + "/slow"
    started = time.monotonic()
    with pytest.raises(RetrieverError, match=f"HTTP retriever {url} .*no answer within 0.3s"):
        HttpRetriever(url, DOCS, timeout_s=0.3).search("q", 5)
    # the server would answer only after SLOW_S (60 s): ending in under half of that proves the timeout ended
    # the call, with room for any load; and no timer fires early
    assert 0.3 - 0.01 <= time.monotonic() - started < SLOW_S / 2


def test_http_connection_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/search"
    with pytest.raises(RetrieverError, match=f"HTTP retriever {url} .*cannot reach the service"):
        HttpRetriever(url, DOCS, timeout_s=2).search("q", 5)


# TrecRunRetriever ---------------------------------------------------------------------------

RUN = """\
q1 Q0 b.md 1 1.0 bm25
q1 Q0 a.md 4 2.5 bm25
q1 Q0 d.md 2 1.0 bm25
q1 Q0 c.md 3 1.0 bm25

q2 Q0 c.md 1 0.2 bm25
"""


def test_trec_run_orders_by_score_then_docno_descending(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(RUN)
    r = TrecRunRetriever(path, DOCS)
    assert r.search("ignored", 10, query_id="q1") == [
        Hit("a.md#0-100", "a.md", 2.5),
        Hit("d.md#0-10", "d.md", 1.0),
        Hit("c.md#0-20", "c.md", 1.0),
        Hit("b.md#0-50", "b.md", 1.0),
    ]
    assert [h.doc_id for h in r.search("x", 2, query_id="q1")] == ["a.md", "d.md"]
    assert r.search("x", 10, query_id="q2") == [Hit("c.md#0-20", "c.md", 0.2)]
    assert r.search("x", 10, query_id="q404") == []
    assert r.query_ids() == ["q1", "q2"]
    config = r.config()
    assert config["name"] == "run" and config["kind"] == "trec_run" and config["tags"] == ["bm25"]
    assert len(config["sha256"]) == 64
    with pytest.raises(RetrieverError, match="needs the query id"):
        r.search("x", 10)


def test_trec_tie_order_agrees_with_trec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    path = tmp_path / "run.txt"
    path.write_text("q Q0 b.md 1 1.0 t\nq Q0 d.md 2 1.0 t\nq Q0 c.md 3 1.0 t\n")
    run = {"q": {"b.md": 1.0, "d.md": 1.0, "c.md": 1.0}}
    first = TrecRunRetriever(path, DOCS).search("x", 1, query_id="q")[0].doc_id
    for doc in ("b.md", "c.md", "d.md"):
        evaluator = pytrec_eval.RelevanceEvaluator({"q": {doc: 1}}, {"P_1"})
        assert evaluator.evaluate(run)["q"]["P_1"] == (1.0 if doc == first else 0.0)


@pytest.mark.parametrize("text, message", [
    ("q1 Q0 a.md 1 2.0 t\nq1 Q0 b.md 2 1.0\n", "run.txt:2: expected 6 fields"),
    ("q1 Q0 a.md 1 high t\n", "run.txt:1: score 'high' is not a finite number"),
    ("q1 Q0 a.md 1 nan t\n", "run.txt:1: score 'nan' is not a finite number"),
    ("\nq1 Q0 ghost.md 1 1.0 t\n", "run.txt:2: unknown document id 'ghost.md'"),
    ("q1 Q0 a.md 1 2.0 t\nq1 Q0 a.md 2 1.0 t\n", "run.txt:2: 'a.md' appears twice for query q1 (first at line 1)"),
])
def test_trec_run_malformed_lines(tmp_path, text, message):
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(RetrieverError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TrecRunRetriever(path, DOCS)


def test_trec_run_reads_assay_chunk_ids_as_spans(tmp_path):
    """What `assay export --format trec` writes at chunk level: docnos '<doc>#<start>-<end>'."""
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a.md#0-40 1 3.0 t\nq1 Q0 a.md#40-100 2 2.0 t\nq1 Q0 c.md 3 1.0 t\nq1 Q0 c.md#0-20 4 0.5 t\n"
                    "q2 Q0 b.md#10-20 1 1.0 t\nq2 Q0 b.md#0-10 2 1.0 t\n")
    r = TrecRunRetriever(path, DOCS)
    # c.md and c.md#0-20 name one span: the first kept; equal scores by docno descending, as trec_eval ranks them
    assert r.search("x", 10, query_id="q1") == [
        Hit("a.md#0-40", "a.md", 3.0), Hit("a.md#40-100", "a.md", 2.0), Hit("c.md#0-20", "c.md", 1.0)]
    assert r.search("x", 10, query_id="q2") == [Hit("b.md#10-20", "b.md", 1.0), Hit("b.md#0-10", "b.md", 1.0)]


def test_trec_run_in_rank_order_follows_the_files_ranks(tmp_path, capsys):
    path = tmp_path / "run.txt"
    path.write_text(RUN)
    assert [h.doc_id for h in TrecRunRetriever(path, DOCS, order="rank").search("x", 10, query_id="q1")] == [
        "b.md", "d.md", "c.md", "a.md"]
    assert capsys.readouterr().err == ""
    TrecRunRetriever(path, DOCS)  # by score: q1's ranks say otherwise, which a note tells
    assert capsys.readouterr().err == (
        "note: 1 of 2 queries of run.txt rank their lines otherwise than trec_eval's order (score, then docno "
        "descending), the order used here; --run-order rank (run_order = \"rank\") keeps the file's ranks, as "
        "`assay export --format trec` wrote them\n")
    path.write_text("q1 Q0 a.md one 1.0 t\n")
    assert TrecRunRetriever(path, DOCS).search("x", 1, query_id="q1")[0].doc_id == "a.md"  # ignored by score
    with pytest.raises(RetrieverError, match="run.txt:1: rank 'one' is not a whole number, which --run-order rank"):
        TrecRunRetriever(path, DOCS, order="rank")


@pytest.mark.parametrize("docno, message", [
    ("ghost.md#0-5", "unknown document id 'ghost.md#0-5'; the run must use the corpus's document ids, or assay's "
                     "chunk ids '<doc_id>#<start>-<end>'"),
    ("a.md#0-", "unknown document id 'a.md#0-'"),
    ("a.md#50-500", r"bad span \[50, 500\) for 'a.md': need integers 0 <= start < end <= 100"),
    ("a.md#7-7", r"bad span \[7, 7\)"),
])
def test_trec_run_refuses_a_chunk_id_outside_the_corpus(tmp_path, docno, message):
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 {docno} 1 1.0 t\n")
    with pytest.raises(RetrieverError, match="run.txt:1: " + message):
        TrecRunRetriever(path, DOCS)


def test_trec_run_missing_file(tmp_path):
    with pytest.raises(RetrieverError, match="cannot read"):
        TrecRunRetriever(tmp_path / "absent.txt", DOCS)


# Plugins ------------------------------------------------------------------------------------

PLUGIN_MODULE = textwrap.dedent("""
    from assay.retrieval.external import CallableRetriever

    def make(docs, answer="a.md"):
        return CallableRetriever(lambda question, limit: [answer], docs, name="fixed")

    def make_nothing(docs):
        return object()
""")


@pytest.fixture
def plugin_site(tmp_path):
    site = tmp_path / "site"
    dist = site / "assay_test_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-test-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[assay.retrievers]\n"
        "fixed = assay_test_plugin_mod:make\n"
        "hollow = assay_test_plugin_mod:make_nothing\n"
        "broken = assay_test_plugin_missing_mod:make\n"
    )
    (site / "assay_test_plugin_mod.py").write_text(PLUGIN_MODULE)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield site
    sys.path.remove(str(site))
    sys.modules.pop("assay_test_plugin_mod", None)
    importlib.invalidate_caches()


def test_plugin_from_an_entry_point(plugin_site):
    assert {"fixed", "hollow", "broken"} <= set(plugin_names())
    factory = load_plugin("fixed")
    r = factory(DOCS, answer="c.md")
    assert r.search("q", 5) == [Hit("c.md#0-20", "c.md", -1.0)]
    assert plugin_retriever("fixed", DOCS).search("q", 5) == [Hit("a.md#0-100", "a.md", -1.0)]


def test_plugin_errors(plugin_site):
    with pytest.raises(RetrieverError) as err:
        load_plugin("nope")
    assert "unknown retriever plugin 'nope'" in str(err.value)
    assert "broken, fixed, hollow" in str(err.value)
    with pytest.raises(RetrieverError, match="'broken' .* cannot be loaded: ModuleNotFoundError"):
        load_plugin("broken")
    with pytest.raises(RetrieverError, match="'hollow' returned object, which lacks search\\(\\) and config\\(\\)"):
        plugin_retriever("hollow", DOCS)
    with pytest.raises(RetrieverError, match="'fixed' failed to start: TypeError"):
        plugin_retriever("fixed", DOCS, colour="red")


def test_plugins_are_gone_with_their_distribution():
    assert "fixed" not in plugin_names()


# Hardening: credentials, redirects, deadlines, odd answers ----------------------------------

ENV_DUMP = textwrap.dedent("""
    import json, os, sys
    for line in sys.stdin:
        req = json.loads(line)
        if req["query"] == "env":  # the file first: assay reads it once the answer arrives
            with open(sys.argv[1], "w") as out:
                json.dump(dict(os.environ), out)
            print(json.dumps({"results": []}), flush=True)
        else:  # a program that read the key from its own config file, and says so on stderr
            key = open(sys.argv[2]).read()
            sys.stderr.write("auth failed for " + key + " / " + json.dumps(key).replace("s", "\\\\u0073")
                             + " / " + key.replace("/", "%2F") + "\\n")
            sys.exit(3)
""")


def test_a_command_runs_without_assay_credentials_and_its_stderr_is_redacted(tmp_path, monkeypatch):
    key = "sk-proj/command-secret-42"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-abcdefgh")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdefgh")
    monkeypatch.setenv("CONFIGURED_CRED", "cred-abcdefgh")  # named by a *_api_key_env setting only
    # credentials no name rule catches: the environment a command gets is an allowlist
    monkeypatch.setenv("DATABASE_URL", "postgres://app:pw-abcdefgh@db.internal/prod")
    monkeypatch.setenv("SECRET_KEY_BASE", "5ecret-key-base-abcdefgh")
    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/abcdefgh")
    monkeypatch.setenv("ASSAY_TEST_INDEX_DIR", "/srv/index")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    script, dump, keyfile = tmp_path / "env.py", tmp_path / "env.json", tmp_path / "key.txt"
    script.write_text(ENV_DUMP)
    keyfile.write_text(key)
    r = CommandRetriever([sys.executable, str(script), str(dump), str(keyfile)], DOCS, timeout_s=5,
                         secret_env=["CONFIGURED_CRED"], pass_env=["ASSAY_TEST_INDEX_DIR"])
    try:
        assert r.search("env", 5) == []
        env = json.loads(dump.read_text())
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_SERVICE_TOKEN", "CONFIGURED_CRED", "DATABASE_URL",
                     "SECRET_KEY_BASE", "SLACK_WEBHOOK_URL"):
            assert name not in env, name
        assert (env["PATH"], env["HOME"], env["LANG"]) == (os.environ["PATH"], os.environ["HOME"], "C.UTF-8")
        assert env["ASSAY_TEST_INDEX_DIR"] == "/srv/index" and env["LC_ALL"] == "C.UTF-8"
        # nothing but the allowlist, LC_*, the name passed, and what the interpreter sets for itself
        assert set(env) - set(CHILD_ENV_ALLOWED) - {"ASSAY_TEST_INDEX_DIR", "LC_CTYPE"} <= {"LC_ALL"}
        with pytest.raises(RetrieverError) as err:
            r.search("leak", 5)
    finally:
        r.close()
    message = str(err.value)
    assert "exited with code 3" in message and "auth failed for *** / \"***\" / ***" in message
    assert redact(message, [key]) == message


def test_http_redirect_is_never_followed_with_the_key(monkeypatch):
    from retrieval.answer.chat_server import ChatServer, content, redirect

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("ASSAY_TEST_API_KEY", "sk-retriever-redirect-1")
    with ChatServer([content("never")], path=None) as other:
        with ChatServer([redirect(other.url + "/search?key=x", 307)], path=None) as server:
            r = HttpRetriever(server.url + "/search", DOCS, api_key_env="ASSAY_TEST_API_KEY", timeout_s=5)
            with pytest.raises(RetrieverError) as err:
                r.search("q", 5)
        assert other.requests == []
    assert str(err.value).endswith(f"the endpoint redirected to {other.url} (HTTP 307); "
                                   "assay does not follow redirects")


def test_http_trickle_ends_at_the_deadline(monkeypatch):
    from retrieval.answer.chat_server import ChatServer, raw, trickle

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # a byte every 0.1 s: each read is well within the 0.6 s timeout, and the whole answer takes 60 s
    with ChatServer([trickle(raw('["a.md"]' + " " * 592), 0.1, body_only=True)], path=None) as server:
        started = time.monotonic()
        with pytest.raises(RetrieverError, match=r"no answer within 0\.6s"):
            HttpRetriever(server.url + "/search", DOCS, timeout_s=0.6).search("q", 5)
        # only the deadline on the whole answer can end it in under half of those 60 s, under any load
        assert 0.6 - 0.01 <= time.monotonic() - started < 30


def test_http_huge_answer_is_refused(monkeypatch):
    from retrieval.answer.chat_server import ChatServer, huge

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with ChatServer([huge(50 * 1024 * 1024)], path=None) as server:
        with pytest.raises(RetrieverError, match="the answer is larger than 65536 bytes"):
            HttpRetriever(server.url + "/search", DOCS, timeout_s=5, max_bytes=65536).search("q", 5)


ODD_ANSWERS = [
    ("{}", "expected a list of results or {\"results\": [...]}"),
    ('{"results": {"a.md": 1}}', "expected a list of results, got dict"),
    ('{"results": null}', "expected a list of results, got NoneType"),
    ("null", "expected a list of results, got NoneType"),
    ("true", "expected a list of results, got bool"),
    ('"a.md"', "expected a list of results, got str"),
    ("[[]]", "a result must be a document id or an object, got []"),
    ("[null]", "a result must be a document id or an object, got None"),
    ("[1e400]", "a result must be a document id or an object, got inf"),
    ('[{"doc_id": "a.md", "score": 1e400}]', "score must be a finite number, got inf"),
    ('[{"doc_id": "a.md", "score": ' + "9" * 400 + "}]", "score must be a finite number, got 9999"),
    ('[{"doc_id": ["a.md"]}]', "unknown document id ['a.md']"),
    ('[{"chunk_id": 5}]', "chunk_id 5 is not of the form"),
    ('[{"doc_id": "a.md", "start": "0", "end": 5}]', "bad span ['0', 5)"),
    ('[{"doc_id": "a.md", "start": 0, "end": ' + "9" * 4000 + "}]", "bad span [0, 9999"),
    ("[" * 100_000, "the answer is JSON nested deeper than 64 levels"),
    ("[" * 500 + "]" * 500, "the answer is JSON nested deeper than 64 levels"),
    ('[{"doc_id": "a.md", "why": ' + '{"a": ' * 500 + "1" + "}" * 500 + "}]",
     "the answer is JSON nested deeper than 64 levels"),
    ("[" + "9" * 5000 + "]", "the answer is not JSON"),
    ("", "the answer is not JSON: ''"),
    ("\xff\xfe", "the answer is not JSON"),
]


@pytest.mark.parametrize("body, message", ODD_ANSWERS)
def test_http_odd_json_is_a_retriever_error(body, message, monkeypatch):
    from retrieval.answer.chat_server import ChatServer, raw

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with ChatServer([raw(body)], path=None) as server:
        with pytest.raises(RetrieverError) as err:
            HttpRetriever(server.url + "/search", DOCS, timeout_s=5).search("q", 5)
    assert message in str(err.value)
    assert len(str(err.value)) < 600


def test_http_a_key_echoed_in_results_is_redacted(monkeypatch):
    from retrieval.answer.chat_server import ChatServer, echo_key

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("ASSAY_TEST_API_KEY", "sk-retriever-echo-77")
    escaped = echo_key(lambda key: json.dumps([{"doc_id": "".join("\\u%04x" % ord(c) for c in key)}]).replace(
        "\\\\", "\\"))
    with ChatServer([escaped], path=None) as server:
        r = HttpRetriever(server.url + "/search", DOCS, api_key_env="ASSAY_TEST_API_KEY", timeout_s=5)
        with pytest.raises(RetrieverError) as err:
            r.search("q", 5)
    assert "unknown document id '***'" in str(err.value)
