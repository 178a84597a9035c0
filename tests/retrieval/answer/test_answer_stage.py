"""The answer stage end to end: the extractive generator on the demo, and the OpenAI-compatible generator
against a real chat-completions server on loopback exercising every failure reason."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.compute import evaluate
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, execute_run, run
from assay.store.warehouse import Warehouse
from chat_server import ChatServer, content, echo_headers, hang, status, tool_call
from conftest import DEMO

KEY = "sk-test-NEVER-STORE-0123456789"
ANSWER_MEASURES = [parse_measure(m) for m in ("answer_rate", "refusal_rate", "citation_precision", "faithfulness")]


def answer_rows(wh, run_id):
    cols = ["query_id", "status", "refusal", "failure_stage", "mode", "claims_returned", "claims_kept", "drops",
            "repair_turns", "http_status", "parse_errors", "error", "response_excerpt"]
    rows = wh.con.execute(f"SELECT {', '.join(cols)} FROM answers WHERE run_id = ? ORDER BY query_id",
                          [run_id]).fetchall()
    return {r[0]: dict(zip(cols, r)) for r in rows}


@pytest.mark.slow  # a hybrid run of the demo set: its corpus embedded with the offline model
def test_extractive_on_the_demo_reports_answer_metrics_and_gates(tmp_path):
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions("hybrid", generator="extractive"))
        rows = {(r.metric, r.slice): r for r in evaluate(wh, rec.run_id, ANSWER_MEASURES)}
        for m in ("answer_rate", "refusal_rate", "citation_precision", "faithfulness"):
            r = rows[(m, "all")]
            assert 0 <= r.ci_low <= r.value <= r.ci_high <= 1 and r.n > 0
        assert rows[("answer_rate", "all")].n == 56 and rows[("refusal_rate", "all")].n == 15
        # every kept claim's citations quote their chunk verbatim (the contract held)
        bad = wh.con.execute("SELECT COUNT(*) FROM citations c JOIN claims k USING (run_id, query_id, claim_idx) "
                             "WHERE c.run_id = ? AND k.kept AND NOT c.valid", [rec.run_id]).fetchall()[0][0]
        assert bad == 0
    report = CliRunner().invoke(cli, ["report", rec.run_id, "--warehouse", str(path)]).stdout
    assert "come from the extractive generator" in report and "rule-based" in report
    assert "Through the answer stage" in report
    junit = tmp_path / "gate.xml"
    gate = CliRunner().invoke(cli, ["gate", rec.run_id, "--preset", "rag", "--junit", str(junit),
                                    "--warehouse", str(path)])
    assert gate.exit_code in (0, 6) and "answer_rate>=0.5" in gate.stdout and "faithfulness>=0.8" in gate.stdout
    assert junit.read_text().count("<testcase") == 5


@pytest.fixture
def contexts(mini_corpus, mini_judgments):
    """Each question's top chunk (id, text) in the bm25 pipeline: what the generator will see first."""
    rec = execute_run(mini_corpus, mini_judgments, RunOptions("bm25", chunk_size=120))
    texts = {c.chunk_id: c.text for c in rec.chunks}
    top = {}
    for qid, stage, rank, cid, _, _ in rec.hits:
        if stage == "final" and rank == 1:
            top[qid] = (cid, texts[cid])
    return top


def claim(cid, quote, text="a claim"):
    return {"text": text, "citations": [{"chunk_id": cid, "quote": quote}]}


def openai_options(url, **kw):
    # every scripted reply that should come is read under a timeout no loaded machine can reach; the timeout
    # itself is tested where no reply comes (test_a_model_that_never_answers_fails_its_question_by_timeout)
    kw.setdefault("generator_timeout_s", 60.0)
    return RunOptions("bm25", chunk_size=120, generator="openai", generator_base_url=url, generator_model="test-model",
                      generator_api_key_env="ASSAY_TEST_KEY", generator_backoff_s=[0.01, 0.02], **kw)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_failure_reason_against_a_loopback_server(tmp_path, monkeypatch, mini_corpus, mini_judgments, contexts):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    # questions in id order: backup-readers, cache-size, page-size, restore, (tulips: no results, no request),
    # wal-purpose. Two runs cover every scripted case.
    c = contexts
    first = [
        tool_call({"claims": [claim(c["backup-readers"][0], c["backup-readers"][1][:30].strip())],
                   "insufficient_evidence": False}),                                     # answered
        tool_call('{"claims": [oops'), content(json.dumps(                               # bad JSON -> fallback ok
            {"claims": [claim(c["cache-size"][0], c["cache-size"][1][:25].strip())], "insufficient_evidence": False})),
        tool_call({"claims": [claim(c["page-size"][0], "text that is not in the chunk")],
                   "insufficient_evidence": False}),                                     # quote_mismatch
        tool_call({"claims": [claim(c["restore"][0], c["restore"][1] + " " * 3 + "x" * 250)],
                   "insufficient_evidence": False}),                                     # bad_quote (too long)
        tool_call({"claims": [claim("nope.md#0-10", "whatever"), {"text": "uncited", "citations": []}],
                   "insufficient_evidence": False}),                                     # unknown_citation, uncited
    ]
    with ChatServer(first) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url))
            a = answer_rows(wh, rec.run_id)
            requests = len(server.requests)
    assert requests == 6  # tulips never reached the model
    assert a["tulips"]["refusal"] == "no_results"
    assert a["backup-readers"]["status"] == "answered" and a["backup-readers"]["mode"] == "tool"
    assert a["cache-size"]["status"] == "answered" and a["cache-size"]["mode"] == "json-fallback"
    assert a["cache-size"]["repair_turns"] == 1
    assert (a["page-size"]["refusal"], a["page-size"]["failure_stage"]) == ("no_valid_claim", "validation")
    assert json.loads(a["page-size"]["drops"]) == {"quote_mismatch": 1}
    assert json.loads(a["restore"]["drops"]) == {"bad_quote": 1}
    assert json.loads(a["wal-purpose"]["drops"]) == {"uncited": 1, "unknown_citation": 1}
    assert all(len(r["response_excerpt"] or "") <= 200 for r in a.values())

    second = [
        tool_call({"claims": [], "insufficient_evidence": True}),                          # insufficient_evidence
        tool_call('{"claims": "no"'), content("still not json"),                           # schema (both fail)
        status(429), tool_call({"claims": [claim(c["page-size"][0], c["page-size"][1][:20].strip())],
                                "insufficient_evidence": False}),                         # 429 then success
        status(503), status(503), status(503),                                            # 503 x3: error
        tool_call({"claims": [claim(c["wal-purpose"][0], c["wal-purpose"][1][:20].strip())],
                   "insufficient_evidence": False}),                                     # answered
    ]
    with ChatServer(second) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url))
            a = answer_rows(wh, rec.run_id)
            reqs = wh.con.execute("SELECT status, rate_limited, retry FROM model_requests WHERE run_id = ? "
                                  "ORDER BY seq", [rec.run_id]).fetchall()
            assert all(KEY not in str(v) for t in ("answers", "answer_raw", "model_requests", "runs")
                       for row in wh.con.execute(f"SELECT * FROM {t}").fetchall() for v in row)
    assert a["backup-readers"]["refusal"] == "insufficient_evidence"
    assert (a["cache-size"]["refusal"], a["cache-size"]["failure_stage"]) == ("schema", "schema")
    assert json.loads(a["cache-size"]["parse_errors"])
    assert a["page-size"]["status"] == "answered"
    assert (a["restore"]["status"], a["restore"]["refusal"], a["restore"]["http_status"]) == ("failed", "error", 503)
    assert a["wal-purpose"]["status"] == "answered"
    assert (429, True, 0) in reqs and (503, False, 2) in reqs


def test_a_model_that_never_answers_fails_its_question_by_timeout(tmp_path, monkeypatch, mini_corpus,
                                                                  mini_judgments):
    """One question, whose request the server holds for 60 s (its shutdown cuts that short): the timeout ends the
    question as an error, with no retry. No reply that should come is under the short timeout."""
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    one = tmp_path / "one.jsonl"
    one.write_text("".join(line + "\n" for line in mini_judgments.read_text().splitlines()
                           if json.loads(line)["query_id"] == "wal-purpose"))
    with ChatServer([hang(60.0), content("never asked")]) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, one, openai_options(server.url, generator_timeout_s=0.5))
            a = answer_rows(wh, rec.run_id)
        requests = len(server.requests)
    assert requests == 1 and list(a) == ["wal-purpose"]
    assert (a["wal-purpose"]["status"], a["wal-purpose"]["refusal"]) == ("failed", "error")
    assert "timeout" in a["wal-purpose"]["error"]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_key_never_reaches_the_warehouse_even_when_echoed(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    with ChatServer([echo_headers() for _ in range(5)]) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url))
            assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
            for table in ("answers", "answer_raw", "model_requests", "runs", "claims", "citations"):
                for row in wh.con.execute(f"SELECT * FROM {table}").fetchall():
                    assert all(KEY not in str(v) for v in row), table
            assert answer_rows(wh, rec.run_id)["page-size"]["http_status"] == 400


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_three_429s_mark_the_run_blocked(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    with ChatServer([status(429)] * 3) as server:
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url))
            assert rec.status == "blocked"
            assert wh.con.execute("SELECT status FROM runs").fetchall() == [("blocked",)]
            assert wh.con.execute("SELECT COUNT(*) FROM complete_runs").fetchall() == [(0,)]
            assert len(server.requests) == 3


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_revalidation_needs_no_model_call(tmp_path, monkeypatch, mini_corpus, mini_judgments, contexts):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    c = contexts
    replies = [tool_call({"claims": [claim(c[q][0], c[q][1][:60].strip())], "insufficient_evidence": False})
               for q in ("backup-readers", "cache-size", "page-size", "restore", "wal-purpose")]
    path = tmp_path / "w.duckdb"
    with ChatServer(replies) as server:
        with Warehouse.open(path) as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url))
        before = len(server.requests)
        out = CliRunner().invoke(cli, ["answers", "revalidate", rec.run_id, "--max-quote", "20",
                                       "--warehouse", str(path)], catch_exceptions=False)
        assert out.exit_code == 0 and "no model call" in out.stderr
        assert len(server.requests) == before
    new_id = out.stdout.strip()
    with Warehouse.open(path, read_only=True) as wh:
        old = {r.slice: r.value for r in evaluate(wh, rec.run_id, [parse_measure("answer_rate")])}
        new = {r.slice: r.value for r in evaluate(wh, new_id, [parse_measure("answer_rate")])}
        drops = wh.con.execute("SELECT DISTINCT reason FROM claims WHERE run_id = ? AND NOT kept", [new_id]).fetchall()
    assert old["all"] == 1.0 and new["all"] == 0.0 and drops == [("bad_quote",)]


def test_a_reply_is_stored_up_to_max_reply_chars_and_a_cut_one_is_never_revalidated(tmp_path, monkeypatch,
                                                                                    mini_corpus, mini_judgments,
                                                                                    contexts):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    c = contexts
    padded = [tool_call({"claims": [claim(c[q][0], c[q][1][:60].strip())], "insufficient_evidence": False,
                         "pad": "x" * 70_000}) for q in ("backup-readers", "cache-size", "page-size", "restore")]
    replies = padded + [status(500, "y" * 2000)]
    path = tmp_path / "w.duckdb"
    with ChatServer(replies) as server:
        with Warehouse.open(path) as wh:
            rec = run(wh, mini_corpus, mini_judgments, openai_options(server.url, max_reply_chars=1000))
            raws = wh.con.execute("SELECT raw FROM answer_raw WHERE run_id = ? ORDER BY query_id",
                                  [rec.run_id]).fetchall()
            a = answer_rows(wh, rec.run_id)
    assert rec.config["settings"]["max_reply_chars"] == 1000
    assert len(raws) == 5 and len(padded[0].body) > 70_000
    for (raw,) in raws:  # the first 1000 characters, then a line that says it was cut
        assert raw[1000:].startswith("\n[assay: reply cut at 1000 of ")
        assert raw.endswith(" characters (max_reply_chars)]")
    assert a["backup-readers"]["status"] == "answered"  # the answer was read whole; only what is stored is cut
    assert a["wal-purpose"]["error"].endswith("HTTP 500: '" + "y" * 200 + "...'")
    out = CliRunner().invoke(cli, ["answers", "revalidate", rec.run_id, "--max-quote", "20", "--warehouse", str(path)])
    assert out.exit_code == 1
    assert out.stderr == (f"error: run {rec.run_id} kept 4 model replies only in part or not at all (its "
                          "max_reply_chars is 1000): they cannot be checked again; revalidate a run stored with "
                          "max_reply_chars large enough, or run the questions again\n")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_forced_generation_is_never_a_gate_run(tmp_path, mini_corpus, mini_judgments):
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        base = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
        from assay.runs.abstention import fit_and_store

        cal_id, _ = fit_and_store(wh, base.run_id)
        forced = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120, calibration=cal_id,
                                                                 generator="extractive", force_generation=True))
        normal = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120, calibration=cal_id,
                                                                 generator="extractive"))
        refused = {r[0] for r in wh.con.execute("SELECT query_id FROM answers WHERE run_id = ? AND refusal = "
                                                "'calibration'", [normal.run_id]).fetchall()}
        forced_refused = wh.con.execute("SELECT COUNT(*) FROM answers WHERE run_id = ? AND refusal = 'calibration'",
                                        [forced.run_id]).fetchall()[0][0]
    assert forced_refused == 0 and len(refused) == normal.stats["calibration"]["abstained"]
    out = CliRunner().invoke(cli, ["gate", forced.run_id, "--rule", "answer_rate>=0.0", "--warehouse", str(path)])
    assert out.exit_code == 6 and "never a gate run" in out.stdout


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_judge_model_judges_kept_claims_and_an_unavailable_judge_is_recorded(
        tmp_path, monkeypatch, mini_corpus, mini_judgments, contexts):
    monkeypatch.setenv("ASSAY_TEST_KEY", KEY)
    c = contexts
    gen_replies = [tool_call({"claims": [claim(c[q][0], c[q][1][:30].strip())], "insufficient_evidence": False})
                   for q in ("backup-readers", "cache-size", "page-size", "restore", "wal-purpose")]
    judge_replies = [content('{"supported": true}'), content('{"supported": false}'), status(500),
                     content("maybe?"), content('{"supported": true}')]
    with ChatServer(gen_replies) as gen_server, ChatServer(judge_replies) as judge_server:
        options = openai_options(gen_server.url, judge_base_url=judge_server.url, judge_model="judge-model",
                                 judge_api_key_env="ASSAY_TEST_KEY")
        with Warehouse.open(tmp_path / "w.duckdb") as wh:
            rec = run(wh, mini_corpus, mini_judgments, options)
            verdicts = dict(wh.con.execute("SELECT query_id, verdict FROM claim_judgments WHERE run_id = ?",
                                           [rec.run_id]).fetchall())
            judged = {r.slice: r for r in evaluate(wh, rec.run_id, [parse_measure("judged_faithfulness")])}
    assert verdicts == {"backup-readers": "supported", "cache-size": "unsupported", "page-size": "unavailable",
                        "restore": "unparsed", "wal-purpose": "supported"}
    assert judged["all"].n == 3 and judged["all"].value == pytest.approx(2 / 3)  # unavailable ones left out
    assert judge_server.requests[0]["body"]["model"] == "judge-model"
    report = CliRunner().invoke(cli, ["report", rec.run_id, "--warehouse", str(tmp_path / "w.duckdb")]).stdout
    assert "judged by judge-model; 2 verdict(s) unavailable or unreadable" in report


def test_the_judge_must_be_another_model(mini_corpus, mini_judgments):
    from assay.core.errors import ConfigError

    with pytest.raises(ConfigError, match="judge must be a different model"):
        execute_run(mini_corpus, mini_judgments, openai_options("http://127.0.0.1:9", judge_base_url="http://x",
                                                                judge_model="test-model"))


def test_revalidate_and_history_refuse_what_they_cannot_do(tmp_path, mini_corpus, mini_judgments):
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, mini_corpus, mini_judgments, RunOptions())
    out = CliRunner().invoke(cli, ["answers", "revalidate", rec.run_id, "--max-quote", "50", "--warehouse", str(path)])
    assert out.exit_code == 1 and f"run {rec.run_id} has no answer stage" in out.stderr
    hist = CliRunner().invoke(cli, ["history", "--pipeline", "nope", "--metric", "AP", "--warehouse", str(path)])
    assert hist.exit_code == 1 and "no runs of pipeline 'nope'" in hist.stderr
    bad = CliRunner().invoke(cli, ["regress", rec.run_id, "--max-drop", "AP>0.1", "--warehouse", str(path)])
    assert bad.exit_code == 1 and "cannot read --max-drop 'AP>0.1'" in bad.stderr
    with Warehouse.open(path, read_only=True) as wh:
        assert wh.con.execute("SELECT COUNT(*) FROM runs").fetchall() == [(1,)]  # nothing was written
