"""A lake writer leaves no staging behind: removed on SIGTERM (exit 143) and on a full disk (one line), and what a
killed writer left (its staging, the partitions of its unfinished run) is collected by the next writer, never a
running writer's. Real `assay run --lake` processes, real signals, a real small file system."""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from assay.store.lake import partition_dir
from assay.store.lake.reader import visible_runs
from assay.store.lake.writer import PAUSE_VAR, STAGING
from conftest import MINI

HANG_S = 600  # a bound no loaded machine reaches while a process works, never a measure of its speed


def start(lake, cwd, pause=None):
    """A real `assay run --lake`; with ``pause`` it sleeps that long before its `runs` partition is renamed."""
    env = {**os.environ, **({PAUSE_VAR: str(pause)} if pause else {})}
    return subprocess.Popen([sys.executable, "-m", "assay", "run", "--lake", str(lake), "--corpus",
                             str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl")], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))


def staging(lake) -> list[str]:
    return sorted(p.name for p in lake.iterdir() if p.name.startswith(STAGING))


def partitions(lake) -> set[str]:
    """The run ids any table holds a partition of, visible or not."""
    return {p.name.removeprefix("run_id=") for table in lake.iterdir() if not table.name.startswith((".", "_"))
            for p in table.iterdir()}


def paused(proc, lake, known=()) -> str:
    """Wait until ``proc`` has renamed its first partitions and sleeps before its `runs` one; its run id."""
    deadline = time.monotonic() + HANG_S
    while not (new := partitions(lake) - set(known) if lake.is_dir() else set()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the writer never published a partition"
        time.sleep(0.02)
    (run_id,) = new  # every partition of one writer is of its one run
    return run_id


def test_sigterm_while_publishing_leaves_no_staging_and_no_partition(tmp_path):
    lake = tmp_path / "lake"
    proc = start(lake, tmp_path, pause=HANG_S)
    paused(proc, lake)
    assert len(staging(lake)) == 1
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (143, "")
    assert err.splitlines()[-1] == "terminated (SIGTERM); nothing was written"
    assert staging(lake) == [] and partitions(lake) == set() and visible_runs(lake) == []


@pytest.mark.slow  # three writers, one at a time (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGABRT], ids=["SIGKILL", "SIGABRT"])
def test_the_next_writer_collects_what_a_killed_one_left_but_not_a_running_ones(tmp_path, signum):
    lake = tmp_path / "lake"
    killed = start(lake, tmp_path, pause=HANG_S)
    dead_run = paused(killed, lake)
    killed.send_signal(signum)
    killed.communicate(timeout=HANG_S)
    assert killed.returncode == -signum
    left = staging(lake)
    assert len(left) == 1 and partitions(lake) == {dead_run}  # what it left: staging, and its hits and the rest
    live = start(lake, tmp_path, pause=HANG_S)
    live_run = paused(live, lake, known={dead_run})
    (live_staging,) = set(staging(lake)) - set(left)
    try:
        done = start(lake, tmp_path)
        out, err = done.communicate(timeout=HANG_S)
        assert done.returncode == 0, err
        assert staging(lake) == [live_staging]  # the killed writer's staging went, the running one's stayed
        assert partitions(lake) == {live_run, out.strip()}  # so did the killed writer's partitions
        assert visible_runs(lake) == [out.strip()]
    finally:
        live.send_signal(signal.SIGTERM)
        live.communicate(timeout=HANG_S)
    assert live.returncode == 143 and staging(lake) == [] and partitions(lake) == {out.strip()}


def test_a_full_disk_while_staging_is_one_line_and_leaves_nothing(tmp_path, small_disk):
    lake = small_disk(16) / "lake"  # under one 4 KiB page for each of its files
    proc = start(lake, tmp_path)
    out, err = proc.communicate(timeout=HANG_S)
    assert (proc.returncode, out) == (1, "")
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith("error: cannot write run ") and f"into lake {lake}: " in line
    assert "No space left on device" in line and line.endswith(
        "nothing of it was stored and its staging directory is removed: make room on the lake's disk, then run again")
    assert err.splitlines()[-1] == line and "Traceback" not in err
    # no partition, no staging: only the shared parts that were whole before the disk filled, for the next run
    assert [p.name for p in lake.iterdir()] in ([], ["_shared"])
    assert not [p for p in lake.rglob("*") if p.is_file() and p.relative_to(lake).parts[0] != "_shared"]
