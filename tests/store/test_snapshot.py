"""The BI snapshot (assay.store.snapshot): published after every stored run, atomically, and never in a run's
way: real `assay` processes, a real second process holding the snapshot open, real files."""

import os
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core import scratch
from assay.store.snapshot import LEFT_OUT, TEMPORARY, publish, snapshot_path
from assay.store.warehouse import WAITING, Warehouse
from conftest import MINI, ROOT

RUN = ("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl")

pytestmark = pytest.mark.slow  # assay processes and a BI reader process: `make test` runs them, `make check` does not

# A BI reader: connects to the snapshot (read-only, or read-write as a tool left at its default would), says
# how many runs it sees, keeps the connection open until told to stop, then says again through the same connection.
READER = '''
import sys, duckdb

con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "read_only")
print(con.execute("SELECT COUNT(*) FROM runs").fetchall()[0][0], flush=True)
sys.stdin.readline()
print(con.execute("SELECT COUNT(*) FROM complete_runs").fetchall()[0][0], flush=True)
'''


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def runs_in(path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT COUNT(*) FROM runs").fetchall()[0][0]
    finally:
        con.close()


def assay(wh, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "assay", *map(str, args), "--warehouse", str(wh)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_the_snapshot_is_named_beside_its_warehouse(tmp_path):
    assert snapshot_path(tmp_path / "warehouse" / "assay.duckdb") == tmp_path / "warehouse" / "assay-bi.duckdb"
    assert snapshot_path(tmp_path / "runs.db") == tmp_path / "runs-bi.db"
    assert snapshot_path(tmp_path / "runs") == tmp_path / "runs-bi.duckdb"


def test_a_run_publishes_a_snapshot_that_reads_as_the_warehouse(tmp_path):
    wh = tmp_path / "w.duckdb"
    result = invoke(*RUN, "--snapshot", "--warehouse", wh)
    assert result.exit_code == 0, result.output
    snap = tmp_path / "w-bi.duckdb"
    assert runs_in(snap) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w-bi.duckdb", "w.duckdb"]  # no temporary, no journal
    con = duckdb.connect(str(snap), read_only=True)
    source = duckdb.connect(str(wh), read_only=True)
    try:
        tables = {t for t, in source.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        views = {v for v, in source.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert {t for t, in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()} == tables
        assert {v for v, in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()} == views
        for table in sorted(tables - set(LEFT_OUT)):
            query = f'SELECT * FROM "{table}" ORDER BY ALL'
            assert con.execute(query).fetchall() == source.execute(query).fetchall(), table
        query = "SELECT * FROM run_overview"
        assert con.execute(query).fetchall() == source.execute(query).fetchall()
    finally:
        con.close()
        source.close()
    # it is a warehouse of this schema: assay's own read commands read it
    report = invoke("report", "latest", "--format", "json", "--warehouse", snap)
    assert report.exit_code == 0 and '"pipeline": "bm25"' in report.output


def test_the_embedding_cache_is_left_out(tmp_path):
    wh = tmp_path / "w.duckdb"
    assert invoke(*RUN, "--pipeline", "dense", "--snapshot", "--warehouse", wh).exit_code == 0
    assert runs_in(wh) == 1
    con = duckdb.connect(str(wh), read_only=True)
    (cached,) = con.execute("SELECT COUNT(*) FROM embeddings").fetchall()[0]
    con.close()
    snap = duckdb.connect(str(snapshot_path(wh)), read_only=True)
    try:
        assert cached > 0 and snap.execute("SELECT COUNT(*) FROM embeddings").fetchall() == [(0,)]
    finally:
        snap.close()


def test_the_snapshot_is_off_unless_the_project_or_the_flag_asks_for_it(tmp_path, monkeypatch):
    wh = tmp_path / "w.duckdb"
    monkeypatch.chdir(tmp_path)
    assert invoke(*RUN, "--warehouse", wh).exit_code == 0  # no assay.toml: off
    assert not snapshot_path(wh).exists()
    (tmp_path / "assay.toml").write_text("[warehouse]\nsnapshot = false\n")
    assert invoke(*RUN, "--warehouse", wh).exit_code == 0
    assert not snapshot_path(wh).exists()
    assert invoke(*RUN, "--snapshot", "--warehouse", wh).exit_code == 0  # the flag over the project
    assert runs_in(snapshot_path(wh)) == 3
    (tmp_path / "assay.toml").write_text("[warehouse]\nsnapshot = true\n")
    assert invoke(*RUN, "--no-snapshot", "--warehouse", wh).exit_code == 0  # the flag over the project
    assert runs_in(snapshot_path(wh)) == 3
    assert invoke(*RUN, "--warehouse", wh).exit_code == 0
    assert runs_in(snapshot_path(wh)) == 5
    lake = CliRunner().invoke(cli, [str(a) for a in (*RUN, "--snapshot", "--lake", tmp_path / "lake")])
    assert lake.exit_code == 2 and "--snapshot needs a warehouse: a lake run touches none" in lake.output


def test_every_command_that_stores_a_run_refreshes_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assay.toml").write_text("[warehouse]\nsnapshot = true\n")
    wh = tmp_path / "w.duckdb"
    assert invoke(*RUN, "--warehouse", wh).exit_code == 0
    rescored = invoke("rescore", "latest", "--judgments", MINI / "judgments.jsonl", "--warehouse", wh)
    assert rescored.exit_code == 0, rescored.output
    assert runs_in(snapshot_path(wh)) == 2
    swept = invoke("sweep", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--size", "120",
                   "--size", "200", "--warehouse", wh)
    assert swept.exit_code == 0, swept.output
    assert runs_in(snapshot_path(wh)) == 4


def test_a_failed_publish_warns_and_keeps_the_run(tmp_path):
    wh = tmp_path / "w.duckdb"
    (snapshot_path(wh) / "in-the-way").mkdir(parents=True)  # the rename cannot replace a non-empty directory
    result = assay(wh, *RUN, "--snapshot")
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.strip()
    (warning,) = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: the BI snapshot {snapshot_path(wh)} was not refreshed ([Errno 21] Is a "
                              "directory: ")
    assert warning.endswith("); the run is stored, and BI tools read the previous snapshot until `assay snapshot` "
                            "publishes a new one")
    assert runs_in(wh) == 1 and run_id in assay(wh, "runs").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w-bi.duckdb", "w.duckdb"]  # its temporary copy removed


@pytest.mark.parametrize("mode", ["read_only", "read_write"])
def test_a_bi_reader_holding_the_snapshot_never_blocks_a_run(tmp_path, mode):
    """A second process keeps a connection to the snapshot open for a whole run (read-only, as docs/bi.md says
    to connect, or read-write, a tool's default): the run neither waits nor fails, the reader keeps reading the
    file it opened, and a new connection sees the new run."""
    wh = tmp_path / "w.duckdb"
    assert assay(wh, *RUN, "--snapshot").returncode == 0
    reader = subprocess.Popen([sys.executable, "-c", READER, str(snapshot_path(wh)), mode], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline() == "1\n", reader.stderr.read()
        # no wait allowed: a lock in the way would fail the run at once
        result = subprocess.run([sys.executable, "-m", "assay", *map(str, RUN), "--snapshot", "--warehouse", str(wh)],
                                cwd=ROOT,
                                capture_output=True, text=True, timeout=600, env={**os.environ, "ASSAY_LOCK_WAIT": "0"})
        assert reader.poll() is None  # still connected when the run ended
        assert result.returncode == 0, result.stderr
        assert WAITING not in result.stderr and "warning" not in result.stderr
        assert runs_in(snapshot_path(wh)) == 2  # a new connection opens the new snapshot
        out, err = reader.communicate("done\n", timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert (reader.returncode, out) == (0, "1\n"), err  # its own connection still reads the file it opened


def test_the_snapshot_command_publishes_on_demand(tmp_path):
    wh = tmp_path / "w.duckdb"
    assert invoke(*RUN, "--no-snapshot", "--warehouse", wh).exit_code == 0
    result = invoke("snapshot", "--warehouse", wh)
    assert result.exit_code == 0, result.output
    size = snapshot_path(wh).stat().st_size
    assert result.output.startswith(f"published {snapshot_path(wh)} (1 run, {size / 1e6:.1f} MB) in ")
    assert runs_in(snapshot_path(wh)) == 1
    missing = invoke("snapshot", "--warehouse", tmp_path / "none.duckdb")
    assert missing.exit_code == 1 and "no warehouse at" in missing.output


def test_a_copy_left_by_a_dead_publisher_is_removed(tmp_path, mini_bm25):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    start = scratch.started(sleeper.pid)
    sleeper.kill()
    sleeper.wait()
    wh = tmp_path / "w.duckdb"
    wh.write_bytes(mini_bm25[0].read_bytes())
    dead = tmp_path / f"{TEMPORARY}{scratch.machine()}-{sleeper.pid}-{start}-w-bi.duckdb"
    dead.write_bytes(b"half a copy")
    with Warehouse.open(wh, read_only=True) as opened:
        done = publish(opened)
    assert (done.path, done.runs) == (snapshot_path(wh), 1)
    assert not dead.exists()


def test_two_publishes_at_once_leave_one_whole_snapshot(tmp_path, mini_bm25):
    """Two publishes at once take turns: both succeed, and what is left is one whole copy and no temporary."""
    import threading

    wh = tmp_path / "w.duckdb"
    wh.write_bytes(mini_bm25[0].read_bytes())
    results, errors = [], []

    def one():
        try:
            with Warehouse.open(wh, read_only=True) as opened:
                results.append(publish(opened))
        except Exception as exc:  # a failure is the test's to report, not the thread's to swallow
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(results) == 2
    assert runs_in(snapshot_path(wh)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w-bi.duckdb", "w.duckdb"]
