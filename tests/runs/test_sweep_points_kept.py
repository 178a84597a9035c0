"""A sweep writes each point as it finishes, so an interruption (SIGINT, SIGTERM, SIGKILL) or a later point's
failure keeps the finished points as complete runs, and its report says which ran; a grid larger than
--max-points is confirmed on a terminal and refused without one. Real `assay` processes, real signals, a real
pseudo-terminal, real DuckDB files."""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from conftest import MINI

CORPUS, JUDGMENTS = MINI / "corpus", MINI / "judgments.jsonl"
HANG_S = 600  # a bound no loaded machine reaches while a process works, never a measure of its speed
# A command retriever that blocks on every question until its gate file exists; it marks that it started.
GATED = '''
import json, os, pathlib, sys, time
corpus, gate = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
parent = os.getppid()  # an assay killed outright (SIGKILL) cannot stop this program: it stops when orphaned
docs = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
pathlib.Path(str(gate) + ".started").touch()
for line in sys.stdin:
    while not gate.exists():
        if os.getppid() != parent:
            sys.exit(0)
        time.sleep(0.02)
    q = json.loads(line)
    print(json.dumps({"results": [{"doc_id": d, "score": 1.0 / (i + 1)} for i, d in enumerate(docs[:q["limit"]])]}),
          flush=True)
'''


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def table_rows(wh, sql):
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture
def gated(tmp_path):
    """An assay.toml whose pipeline `gated` asks the gated retriever, and the gate file that lets it answer."""
    script, gate = tmp_path / "gated.py", tmp_path / "gate"
    script.write_text(GATED)
    cfg = tmp_path / "assay.toml"
    cfg.write_text(f'[pipelines.gated]\nretriever = "command"\n'
                   f'command = {json.dumps([sys.executable, str(script), str(CORPUS), str(gate)])}\n')
    yield cfg, gate
    gate.touch()  # whatever the test did, a retriever still waiting answers and ends


def sweep_process(tmp_path, cfg):
    """A real `assay sweep`: point 1 (BM25) runs to its end; point 2 (the gated retriever) waits at its gate."""
    return subprocess.Popen([sys.executable, "-m", "assay", "sweep", "--corpus", str(CORPUS), "--judgments",
                             str(JUDGMENTS), "--size", "400", "--pipeline", "bm25", "--pipeline", "gated",
                             "--config", str(cfg), "--warehouse", str(tmp_path / "w.duckdb")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path, proc):
    deadline = time.monotonic() + HANG_S
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_an_interrupted_sweep_keeps_its_finished_points_and_its_report_says_which_ran(tmp_path, gated, signum):
    cfg, gate = gated
    wh = tmp_path / "w.duckdb"
    proc = sweep_process(tmp_path, cfg)
    wait_for(tmp_path / "gate.started", proc)  # point 2 computes: point 1 is behind it
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=HANG_S)
    assert out == "" and "Traceback" not in err
    ((sweep_id,),) = table_rows(wh, "SELECT sweep_id FROM sweeps")
    ((run_id, status, pipeline),) = table_rows(
        wh, "SELECT r.run_id, r.status, r.pipeline FROM sweep_points p JOIN runs r USING (run_id) ORDER BY p.point")
    assert (status, pipeline) == ("complete", "bm25")
    assert table_rows(wh, "SELECT COUNT(*) FROM runs") == [(1,)]  # nothing of point 2
    if signum == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        stopped = "interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)"
        assert proc.returncode == 128 + signum
        assert err.splitlines()[-1] == (f"{stopped} after 1 of the 2 points of sweep {sweep_id} were stored, each a "
                                        f"complete run; `assay report --sweep {sweep_id}` shows them")
    shown = invoke("report", "--sweep", sweep_id, "--warehouse", wh)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[2].startswith(f"sweep {sweep_id}: 1 points, ")
    assert lines[3] == ("stopped: 1 of the grid's 2 points ran (points 1 to 1; points 2 to 2 did not: the sweep was "
                        "interrupted or its point 2 failed), so the best point and every comparison are among these 1")
    as_json = json.loads(invoke("report", "--sweep", sweep_id, "--format", "json", "--warehouse", wh).stdout)
    assert as_json["stopped"] == {"ran": 1, "planned": 2} and [p["run_id"] for p in as_json["points"]] == [run_id]


def test_a_point_that_fails_keeps_the_points_before_it(tmp_path, gated):
    cfg, gate = gated
    cfg.write_text(cfg.read_text() + "timeout_s = 0.5\n")  # the gate never opens: point 2's retriever times out
    wh = tmp_path / "w.duckdb"
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", 400, "--pipeline", "bm25",
                 "--pipeline", "gated", "--config", cfg, "--warehouse", wh)
    assert out.exit_code == 5 and out.stdout == "", out.output  # the external retriever failed
    ((sweep_id,),) = table_rows(wh, "SELECT sweep_id FROM sweeps")
    note, error = out.stderr.splitlines()[-2:]
    assert note == (f"note: sweep {sweep_id} stopped at point 2 of 2 (recursive 400/0, pipeline gated); points 1 to "
                    f"1 are stored as complete runs: `assay report --sweep {sweep_id}` shows them")
    assert error.startswith("error: ") and "no answer within 0.5s" in error
    assert table_rows(wh, "SELECT r.status, r.pipeline FROM sweep_points p JOIN runs r USING (run_id)") == [
        ("complete", "bm25")]


def test_a_complete_sweep_says_nothing_of_stopping(tmp_path):
    wh = tmp_path / "w.duckdb"
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", 200, "--size", 400,
                 "--format", "json", "--warehouse", wh)
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert "stopped" not in result and len(result["points"]) == 2
    shown = invoke("report", "--sweep", result["sweep_id"], "--warehouse", wh)
    assert not any(line.startswith("stopped:") for line in shown.stdout.splitlines())


def test_a_grid_over_max_points_is_refused_without_a_terminal(tmp_path):
    wh = tmp_path / "w.duckdb"
    sizes = [a for size in range(100, 201) for a in ("--size", size)]  # 101 points: one over the default
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, *sizes, "--warehouse", wh)
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [
        "error: sweep: the grid has 101 points, more than --max-points 100 ([sweep] max_points), and each point is a "
        "full run of every question; nothing was run: narrow the grid, or give --max-points 101 to run them all"]
    assert not wh.exists()
    two = ["--size", 200, "--size", 400]
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, *two, "--max-points", 1, "--warehouse", wh)
    assert out.exit_code == 2 and "the grid has 2 points, more than --max-points 1" in out.stderr
    assert not wh.exists()
    (tmp_path / "assay.toml").write_text("[sweep]\nmax_points = 1\n")
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, *two, "--config", tmp_path / "assay.toml",
                 "--warehouse", wh)
    assert out.exit_code == 2 and "the grid has 2 points, more than --max-points 1" in out.stderr
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, *two, "--config", tmp_path / "assay.toml",
                 "--max-points", 2, "--format", "json", "--warehouse", wh)  # the flag wins over assay.toml
    assert out.exit_code == 0 and len(json.loads(out.stdout)["points"]) == 2, out.output


@pytest.mark.parametrize("toml, says", [("[sweep]\nmax_points = 0\n", "must be an integer from 1 to 2147483647, got 0"),
                                        ("[sweep]\nmax_points = 2.5\n", "must be an integer")])
def test_a_bad_max_points_names_the_file_and_key(tmp_path, toml, says):
    cfg = tmp_path / "assay.toml"
    cfg.write_text(toml)
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--config", cfg,
                 "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and out.stderr.startswith(f"error: {cfg}: [sweep] max_points {says}"), out.output
    bad = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--max-points", 0,
                 "--warehouse", tmp_path / "w.duckdb")
    assert bad.exit_code == 2 and "Invalid value for '--max-points'" in bad.stderr
    assert not (tmp_path / "w.duckdb").exists()


def _on_a_terminal(tmp_path, answer: bytes):
    """A real `assay sweep` of 2 points with --max-points 1 whose stdin and stderr are a pseudo-terminal; it is
    answered ``answer`` when it asks. Returns (exit code, stdout, what the terminal showed)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "assay", "sweep", "--corpus", str(CORPUS), "--judgments",
                             str(JUDGMENTS), "--size", "200", "--size", "400", "--max-points", "1", "--warehouse",
                             str(tmp_path / "w.duckdb")], cwd=tmp_path, stdin=follower, stderr=follower,
                            stdout=subprocess.PIPE)
    os.close(follower)
    shown, asked, deadline = b"", False, time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            shown += chunk
        if not asked and b"Run all 2? [y/N]" in shown:
            os.write(leader, answer)
            asked = True
        if proc.poll() is not None and not ready:
            break
    out = proc.stdout.read()
    proc.wait(HANG_S)
    os.close(leader)
    return proc.returncode, out, shown.decode(errors="replace")


def test_a_terminal_is_asked_before_a_grid_over_max_points(tmp_path):
    code, out, shown = _on_a_terminal(tmp_path, b"n\n")
    assert "sweep: the grid has 2 points, more than --max-points 1, and each is a full run of every question. " \
           "Run all 2? [y/N]" in shown
    assert code == 2 and out == b"" and "nothing was run" in shown
    assert not (tmp_path / "w.duckdb").exists()
    code, out, shown = _on_a_terminal(tmp_path, b"y\n")
    assert code == 0, shown
    assert table_rows(tmp_path / "w.duckdb", "SELECT COUNT(*) FROM sweep_points") == [(2,)]
