"""Scratch directories name their owner, and only those whose owner is gone are stale: real processes (started,
ended, running) and real directories."""

import os
import subprocess
import sys

from assay.core import scratch


def _ended_process() -> tuple[int, int]:
    """(pid, start) of a real process that has ended and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    start = scratch.started(proc.pid)
    proc.communicate(b"")
    return proc.pid, start


def test_a_name_records_this_process_and_when_it_started(tmp_path):
    pid = os.getpid()
    start = scratch.started(pid)
    assert start is not None
    assert scratch.name("assay-x-") == f"assay-x-{scratch.machine()}-{pid}-{start}-"
    assert scratch.alive(pid, start)


def test_only_directories_of_ended_processes_of_this_machine_are_stale(tmp_path):
    here, pid = scratch.machine(), os.getpid()
    ended_pid, ended_start = _ended_process()
    assert not scratch.alive(ended_pid, ended_start)
    names = {
        "ended": f"assay-x-{here}-{ended_pid}-{ended_start}-abc",
        "live": f"assay-x-{here}-{pid}-{scratch.started(pid)}-def",
        "reused pid": f"assay-x-{here}-{pid}-{scratch.started(pid) + 1}-ghi",  # this pid, another start: not us
        "other machine": f"assay-x-{'0' * 8 if here != '0' * 8 else '1' * 8}-{ended_pid}-{ended_start}-jkl",
        "no owner": "assay-x-q1w2e3r4",  # as an assay before owners named its directories
        "other prefix": f"assay-y-{here}-{ended_pid}-{ended_start}-mno",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    found = dict((p.name, rest) for p, rest in scratch.stale(tmp_path, "assay-x-"))
    assert found == {names["ended"]: "abc", names["reused pid"]: "ghi"}


def test_a_missing_parent_has_nothing_stale(tmp_path):
    assert scratch.stale(tmp_path / "absent", "assay-x-") == []
