"""Runs whose answer stage could not run are stored as failed or blocked and say so (exit code 8), and
`gate`/`regress` never pass on an earlier run past them. A real DuckDB file, a real chat-completions
server on loopback (tests/retrieval/answer/chat_server.py), a closed loopback port, a real `assay` subprocess."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval" / "answer"))
from chat_server import ChatServer, status, tool_call  # noqa: E402

KEY_ENV = "ASSAY_OUTCOME_TEST_KEY"
# questions sent to the model: backup-readers, cache-size, page-size, restore, wal-purpose (tulips has no results)
SENT = 5


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A warehouse path and an assay.toml whose pipeline retries fast (the default backoff is 5 s and 10 s)."""
    cfg = tmp_path / "assay.toml"
    cfg.write_text('[pipelines.fast]\nextends = "bm25"\nchunk_size = 120\ngenerator_backoff_s = [0.01, 0.01]\n')
    monkeypatch.setenv(KEY_ENV, "sk-outcome-test")
    return tmp_path / "w.duckdb", cfg


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def run_args(wh, cfg, mini_corpus, mini_judgments, url=None, key_env=KEY_ENV):
    args = ["run", "--pipeline", "fast", "--config", cfg, "--corpus", mini_corpus, "--judgments", mini_judgments,
            "--warehouse", wh]
    if url:
        args += ["--generator", "openai", "--generator-url", url, "--generator-model", "m",
                 "--generator-api-key-env", key_env, "--generator-timeout", "2"]
    return args


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more: connection refused


def stored(wh, run_id):
    with Warehouse.open(wh, read_only=True) as w:
        st, stats = w.con.execute("SELECT status, stats FROM runs WHERE run_id = ?", [run_id]).fetchall()[0]
        answers = w.con.execute("SELECT status, refusal, failure_stage FROM answers WHERE run_id = ? "
                                "ORDER BY query_id", [run_id]).fetchall()
    return st, json.loads(stats), answers


def test_no_key_fails_the_run_with_exit_8_and_it_is_stored_for_inspection(project, mini_corpus, mini_judgments):
    wh, cfg = project
    with ChatServer([]) as server:
        out = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments, server.url, key_env="ASSAY_NO_SUCH_KEY_SET"))
        assert server.requests == []  # without a key nothing is sent
    assert out.exit_code == 8, out.output
    run_id = out.stdout.strip()
    assert f"run {run_id} has status failed: every one of the {SENT} question(s) sent to the model failed at generation" \
        in out.stderr
    assert "ASSAY_NO_SUCH_KEY_SET is not set" in out.stderr and f"assay answers show {run_id}" in out.stderr
    st, stats, answers = stored(wh, run_id)
    assert st == "failed" and stats["outcome"]["status"] == "failed"
    assert answers.count(("failed", "error", "generation")) == SENT and len(answers) == SENT + 1
    shown = invoke("answers", "show", run_id, "--failures", "--warehouse", wh)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"answers of run {run_id}: 6 question(s)")
    assert shown.stdout.count(" failed ") == SENT
    listed = invoke("runs", "--warehouse", wh)
    row = next(line for line in listed.stdout.splitlines() if line.startswith(run_id))
    assert listed.exit_code == 0 and "  FAILED  " in row
    assert listed.stdout.endswith("FAILED: stored for inspection (`assay answers show RUN_ID`), not used by reports\n")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_an_unreachable_endpoint_on_every_question_fails_the_run(project, mini_corpus, mini_judgments):
    wh, cfg = project
    out = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments, closed_port_url()))
    assert out.exit_code == 8, out.output
    assert "has status failed: every one of the 5 question(s) sent to the model failed at generation" in out.stderr
    st, _, answers = stored(wh, out.stdout.strip())
    assert st == "failed" and answers.count(("failed", "error", "generation")) == SENT


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_where_only_some_questions_failed_stays_complete(project, mini_corpus, mini_judgments):
    wh, cfg = project
    # the first question is answered "insufficient evidence"; every later request gets HTTP 500
    with ChatServer([tool_call({"claims": [], "insufficient_evidence": True})]) as server:
        out = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments, server.url))
    assert out.exit_code == 0, out.output
    st, stats, answers = stored(wh, out.stdout.strip())
    assert st == "complete" and "outcome" not in stats
    assert answers.count(("failed", "error", "generation")) == SENT - 1
    assert ("refused", "insufficient_evidence", "generation") in answers


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_blocked_run_exits_8_and_gate_and_regress_latest_fail_on_it(project, mini_corpus, mini_judgments):
    wh, cfg = project
    first = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments))
    assert first.exit_code == 0, first.output
    good = first.stdout.strip()
    with ChatServer([status(429)] * 3) as server:
        out = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments, server.url))
        assert len(server.requests) == 3
    assert out.exit_code == 8, out.output
    blocked = out.stdout.strip()
    assert f"run {blocked} has status blocked: the model endpoint answered HTTP 429 three times in a row" in out.stderr
    assert stored(wh, blocked)[0] == "blocked"

    rule = ("--rule", "Success@10:doc>=0.1")
    assert invoke("gate", good, *rule, "--warehouse", wh).exit_code == 0  # the earlier run passes this rule
    gated = invoke("gate", "latest", *rule, "--warehouse", wh)
    assert gated.exit_code == 8 and gated.stdout == ""
    assert gated.stderr.startswith(f"error: the newest run {blocked} has status blocked (the model endpoint answered "
                                   "HTTP 429 three times in a row")
    assert "gating it fails" in gated.stderr and "name it by its id" in gated.stderr
    assert invoke("gate", *rule, "--warehouse", wh).exit_code == 8  # latest is the default
    named = invoke("gate", blocked, *rule, "--warehouse", wh)
    assert named.exit_code == 8 and f"run {blocked} has status blocked" in named.stderr

    drop = ("--max-drop", "Success@3=0.5")
    regressed = invoke("regress", "latest", *drop, "--warehouse", wh)
    assert regressed.exit_code == 8 and "checking it for regressions fails" in regressed.stderr
    as_baseline = invoke("regress", good, "--baseline", blocked, *drop, "--warehouse", wh)
    assert as_baseline.exit_code == 8 and "using it as the baseline fails" in as_baseline.stderr

    report = invoke("report", blocked, "--warehouse", wh)
    assert report.exit_code == 1 and f"run {blocked} has status blocked: it is stored for inspection" in report.stderr

    # a complete run after the blocked one: `latest` is it again, and the baseline steps over the blocked
    # run to the complete one before it, naming what it stepped over
    third = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments))
    newest = third.stdout.strip()
    assert invoke("gate", *rule, "--warehouse", wh).exit_code == 0
    result = invoke("regress", *drop, "--format", "json", "--warehouse", wh)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["candidate"], data["baseline"]) == (newest, good)
    assert [(s["run_id"], s["status"]) for s in data["skipped"]] == [(blocked, "blocked")]
    assert f"note: --baseline latest stepped over run {blocked}, which has status blocked" in result.stderr
    history = invoke("history", "--pipeline", "fast", "--metric", "Success@3", "--warehouse", wh)
    assert history.exit_code == 0 and f"note: run {blocked} has status blocked" in history.stderr
    assert blocked not in history.stdout and good in history.stdout and newest in history.stdout


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_library_stores_a_failed_run_with_its_reason(project, mini_corpus, mini_judgments):
    wh, cfg = project
    with Warehouse.open(wh) as w:
        rec = run(w, mini_corpus, mini_judgments, RunOptions(
            "bm25", chunk_size=120, generator="openai", generator_base_url=closed_port_url(),
            generator_model="m", generator_api_key_env=KEY_ENV, generator_timeout_s=2.0))
    assert rec.status == "failed"
    assert rec.stats["outcome"]["reason"].startswith("every one of the 5 question(s) sent to the model failed")
    assert stored(wh, rec.run_id)[0] == "failed"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_real_assay_process_exits_8_on_a_failed_run(project, mini_corpus, mini_judgments):
    wh, cfg = project
    args = [str(a) for a in run_args(wh, cfg, mini_corpus, mini_judgments, closed_port_url())]
    proc = subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, KEY_ENV: "sk-outcome-test"})
    assert proc.returncode == 8, proc.stderr
    run_id = proc.stdout.strip()
    assert f"error: run {run_id} has status failed" in proc.stderr
    assert stored(wh, run_id)[0] == "failed"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_sweep_whose_point_could_not_answer_exits_8_naming_it(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv(KEY_ENV, "sk-outcome-test")
    cfg = tmp_path / "assay.toml"
    cfg.write_text(f'[pipelines.asks]\nextends = "bm25"\ngenerator = "openai"\ngenerator_base_url = '
                   f'"{closed_port_url()}"\ngenerator_model = "m"\ngenerator_api_key_env = "{KEY_ENV}"\n')
    wh = tmp_path / "w.duckdb"
    out = invoke("sweep", "--corpus", mini_corpus, "--judgments", mini_judgments, "--config", cfg,
                 "--pipeline", "asks", "--size", "120", "--warehouse", wh)
    assert out.exit_code == 8, out.output
    with Warehouse.open(wh, read_only=True) as w:
        (run_id, status_), = w.con.execute("SELECT run_id, status FROM runs").fetchall()
    assert status_ == "failed"
    assert f"1 point(s) did not complete (run {run_id} has status failed)" in out.stderr


@pytest.mark.parametrize("key, problem", [
    ("sk-outcome-test\n", "has whitespace around the key (a trailing newline?); set it to the key alone, e.g. "
                          "export ASSAY_OUTCOME_TEST_KEY=\"$(tr -d '[:space:]' < KEYFILE)\""),
    ("  sk-outcome-test", "has whitespace around the key"),
    ("sk-outcome-tést", "holds a character that is not ASCII (at position 13 of 15); set it to the key your "
                        "provider issued (keys are ASCII)"),
    ("sk-outcome\ttest", "holds whitespace or a control character inside the key"),
])
def test_a_key_no_header_can_carry_is_refused_before_any_question(project, mini_corpus, mini_judgments, monkeypatch,
                                                                   key, problem):
    # once: a trailing newline printed the key in full and stored it (answers.error, model_requests.error,
    # runs.stats); a non-ASCII key was a UnicodeEncodeError traceback
    wh, cfg = project
    monkeypatch.setenv(KEY_ENV, key)
    with ChatServer([]) as server:
        out = invoke(*run_args(wh, cfg, mini_corpus, mini_judgments, server.url))
        assert server.requests == []
    assert out.exit_code == 1, out.output
    last = out.stderr.splitlines()[-1]
    assert last.startswith(f"error: model endpoint {server.url} (m): environment variable {KEY_ENV} {problem}")
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert key.strip() not in out.output and "Traceback" not in out.output
    if wh.exists():
        with Warehouse.open(wh, read_only=True) as w:
            assert w.con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
