"""The BM25 index's temporary directory never outlives its run: removed on SIGTERM (exit 143) and on a full disk
(one line), and collected by the next run when SIGKILL or SIGABRT left it, never while its process runs. Real
`assay` processes, real signals, a real chat-completions server on loopback holding each run at its first
question, a real small file system."""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from assay.retrieval.bm25 import SCRATCH
from conftest import MINI
from retrieval.answer.chat_server import ChatServer, hang

KEY_ENV = "ASSAY_SCRATCH_TEST_KEY"
HANG_S = 600  # a bound no loaded machine reaches while a process works, never a measure of its speed


def start(tmp_path, tmpdir, url=None):
    """A real `assay run` of the mini set with TMPDIR=tmpdir; with ``url`` its answer stage asks that server."""
    args = [sys.executable, "-m", "assay", "run", "--corpus", MINI / "corpus", "--judgments",
            MINI / "judgments.jsonl", "--warehouse", tmp_path / "w.duckdb"]
    if url:
        args += ["--generator", "openai", "--generator-url", url, "--generator-model", "m",
                 "--generator-api-key-env", KEY_ENV, "--generator-timeout", str(HANG_S)]
    return subprocess.Popen([str(a) for a in args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(tmpdir), KEY_ENV: "sk-scratch-test"},
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))  # SIGABRT: no core


def asking(server, proc, n=1):
    """Wait until ``n`` questions reached the server: the run is then between its index and its write."""
    deadline = time.monotonic() + HANG_S
    while len(server.requests) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no question reached the server"
        time.sleep(0.02)


def indexes(tmpdir) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir() if p.name.startswith(SCRATCH))


def test_sigterm_removes_the_index_and_exits_143_with_one_line(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    with ChatServer([hang(HANG_S)] * 6) as server:
        proc = start(tmp_path, tmpdir, server.url)
        asking(server, proc)
        assert len(indexes(tmpdir)) == 1  # the index is on disk while the run asks
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (143, "")
    assert err.splitlines()[-1] == "terminated (SIGTERM); nothing was written"
    assert "Traceback" not in err
    assert indexes(tmpdir) == []


@pytest.mark.slow  # processes started and killed: over 2 s
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGABRT], ids=["SIGKILL", "SIGABRT"])
def test_what_a_killed_run_left_is_collected_by_the_next_but_a_live_runs_is_not(tmp_path, signum):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    with ChatServer([hang(HANG_S)] * 12) as server:
        killed = start(tmp_path, tmpdir, server.url)
        asking(server, killed)
        (left,) = indexes(tmpdir)
        killed.send_signal(signum)
        killed.communicate(timeout=HANG_S)
        assert killed.returncode == -signum and indexes(tmpdir) == [left]  # what the killed process left
        live = start(tmp_path, tmpdir, server.url)
        asking(server, live, 2)
        (kept,) = set(indexes(tmpdir)) - {left}
        plain = start(tmp_path, tmpdir)  # a run without an answer stage, to its end
        out, err = plain.communicate(timeout=HANG_S)
        assert plain.returncode == 0, err
        assert indexes(tmpdir) == [kept]  # the dead process's index is gone, the running one's is not
        live.send_signal(signal.SIGTERM)
        live.communicate(timeout=HANG_S)
    assert live.returncode == 143 and indexes(tmpdir) == []


def test_a_full_disk_while_indexing_is_one_line_and_leaves_nothing(tmp_path, small_disk):
    tmpdir = small_disk(8)
    proc = start(tmp_path, tmpdir)
    out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (1, "")
    assert err.splitlines()[-1] == (f"error: cannot build the BM25 index in {tmpdir}: No space left on device; its "
                                    "directory is removed, nothing was written: free space there, or set TMPDIR to "
                                    "a directory with room, and run again")
    assert list(tmpdir.iterdir()) == []
