"""A write refused for want of room at commit: one line, exit 1, nothing stored, nothing left behind.

How the disk is filled: each command runs in a real `assay` process whose RLIMIT_FSIZE (`ulimit -f`) is a few
kilobytes, with SIGXFSZ ignored, so a write past the limit fails with EFBIG ("File too large") as a write to a full
disk fails with ENOSPC. This needs no root, no mount and no disk of a chosen size, so it runs the same here and in
any CI container (a small tmpfs would need root or CAP_SYS_ADMIN, which containers usually lack). assay treats
ENOSPC, EDQUOT and EFBIG alike (assay.core.files.no_room); a real ENOSPC, from writing to /dev/full, is checked to
be recognised the same way. The limit is far below what each commit writes (a run of the mini set writes about
65 KB of WAL) and above what the command writes before it (the BM25 index of four documents)."""

import errno
import os
import resource
import signal
import subprocess
import sys

import duckdb
import pytest

from assay.core.files import no_room
from conftest import MINI, ROOT

LIMIT = 20_000  # bytes: a run's commit writes more than this into the warehouse's WAL
CORPUS, JUDGMENTS = MINI / "corpus", MINI / "judgments.jsonl"


def assay(*args, limit=None):
    """`assay ARGS` in a real process, its files limited to ``limit`` bytes when given."""

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal's default, death
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "assay", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=300,
                          preexec_fn=limited if limit else None)


def one_error(result) -> str:
    """The command failed with exit 1 and one error line, last, and no traceback."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.stderr.splitlines()[-1] == errors[0], result.stderr
    return errors[0]


@pytest.mark.slow  # assay processes run against a size limit: over 2 s
def test_a_run_that_finds_no_room_at_commit_is_one_line_and_stores_nothing(tmp_path):
    wh = tmp_path / "w.duckdb"
    assert assay("ingest", CORPUS, "--warehouse", wh).returncode == 0
    full = assay("run", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--warehouse", wh, limit=LIMIT)
    line = one_error(full)
    assert line.startswith(f"error: cannot write to warehouse {wh}: a file grew past the size limit (")
    assert line.endswith("File too large); nothing of this command was stored: make room on its disk, then run the "
                         "command again")
    assert full.stdout == ""
    assert assay("runs", "--warehouse", wh).stdout == "no runs yet\n"  # the warehouse as it was, and it reads
    again = assay("run", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--warehouse", wh)  # with room: stored
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() in assay("runs", "--warehouse", wh).stdout


def test_ingest_into_a_new_warehouse_without_room_leaves_no_file(tmp_path):
    wh = tmp_path / "w.duckdb"
    line = one_error(assay("ingest", CORPUS, "--warehouse", wh, limit=LIMIT))
    assert line.startswith(f"error: cannot write to warehouse {wh}: a file grew past the size limit (")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no empty shell of a warehouse, no WAL


def test_a_lake_run_without_room_removes_its_staging(tmp_path):
    lake = tmp_path / "lake"
    full = assay("run", "--lake", lake, "--corpus", CORPUS, "--judgments", JUDGMENTS, limit=5_000)
    line = one_error(full)
    assert line.startswith("error: cannot write run ") and f" into lake {lake}: a file grew past the size limit (" \
        in line
    assert line.endswith("File too large); nothing of it was stored and its staging directory is removed: make room "
                         "on the lake's disk, then run again")
    # no .tmp-<run>-<pid> staging directory, no partition; only whole shared parts may stay (other runs of the same
    # corpus would use them; `assay lake prune` removes those no run uses), never a half-written one
    assert [p.name for p in lake.iterdir()] in ([], ["_shared"])
    for part in (p for p in lake.rglob("*") if p.is_file()):
        assert part.suffix == ".parquet" and not part.name.startswith("."), part
        duckdb.connect().execute("SELECT COUNT(*) FROM read_parquet(?)", [str(part)]).fetchall()  # readable whole
    again = assay("run", "--lake", lake, "--corpus", CORPUS, "--judgments", JUDGMENTS)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() in assay("lake", "runs", lake).stdout


def test_a_full_disk_and_a_size_limit_are_recognised_alike(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError) as full:  # a real ENOSPC
        with open("/dev/full", "wb", buffering=0) as f:
            f.write(b"x")
    assert full.value.errno == errno.ENOSPC and no_room(full.value) == "no space left on the device"
    assert no_room(OSError(errno.EFBIG, "File too large")) == "a file grew past the size limit"
    assert no_room(OSError(errno.EDQUOT, "Disk quota exceeded")) == "the disk quota is exceeded"
    said = duckdb.IOException('Could not write file "w.duckdb.wal": No space left on device')
    assert no_room(said) == "no space left on the device"
    try:
        raise RuntimeError("while committing") from full.value
    except RuntimeError as wrapped:
        assert no_room(wrapped) == "no space left on the device"  # found through the cause
    assert no_room(OSError(errno.EACCES, "Permission denied")) is None and no_room(ValueError("x")) is None
