"""The warehouse is held only while written, and every way a command ends badly is one line: real `assay`
processes, real signals, real locks held by another process, real damaged files, FIFOs and symlinks."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.errors import WarehouseError
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import WAITING, LockHolder, Warehouse
from conftest import DEMO, MINI, ROOT

# A retriever that blocks on every question until its gate file exists, so a test decides when the run may
# finish; it marks that it started (the run is then computing, between its reads and its write).
GATED = '''
import json, pathlib, sys, time
corpus, gate = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
docs = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
pathlib.Path(str(gate) + ".started").touch()
for line in sys.stdin:
    while not gate.exists():
        time.sleep(0.02)
    time.sleep(0.05)
    q = json.loads(line)
    print(json.dumps({"results": [{"doc_id": d, "score": 1.0 / (i + 1)} for i, d in enumerate(docs[:q["limit"]])]}),
          flush=True)
'''


# How long a process may take before the test calls it hung: a bound no loaded machine reaches while the process
# works (a dense run of the demo corpus among them), never a measure of its speed.
HANG_S = 600


class Assay:
    """A real `assay` process whose stderr is read as it comes."""

    def __init__(self, wh, *args, env=None):
        self.proc = subprocess.Popen([sys.executable, "-m", "assay", *map(str, args)], cwd=ROOT,
                                     env={**os.environ, "ASSAY_WAREHOUSE": str(wh), **(env or {})},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = HANG_S) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None or self._reader.is_alive(), f"exited before {text!r}: {self.lines}"
            assert time.monotonic() < deadline, f"no {text!r} on stderr: {self.lines}"
            time.sleep(0.02)

    def interrupt(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def finish(self, timeout: float = HANG_S):
        out = self.proc.stdout.read()  # not communicate(): that would read stderr away from the reader thread
        self.proc.wait(timeout)
        self._reader.join(5)
        return self.proc.returncode, out, self.lines


def assay(wh, *args, env=None, timeout=HANG_S):
    return subprocess.run([sys.executable, "-m", "assay", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "ASSAY_WAREHOUSE": str(wh), **(env or {})}, timeout=timeout)


def gated_run(wh, tmp_path, name, **env):
    script = tmp_path / "gated.py"
    script.write_text(GATED)
    gate = tmp_path / name
    proc = Assay(wh, "run", "--pipeline", "command", "--command", f"{sys.executable} {script} {MINI / 'corpus'} {gate}",
                 "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", env=env)
    return proc, gate


def wait_started(proc, gate, timeout=HANG_S):
    proc.wait_for("pipeline command")
    deadline = time.monotonic() + timeout
    while not os.path.exists(str(gate) + ".started"):
        assert proc.proc.poll() is None and time.monotonic() < deadline, proc.lines
        time.sleep(0.02)


def run_ids(wh) -> set[str]:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return {r for r, in con.execute("SELECT run_id FROM runs").fetchall()}
    finally:
        con.close()


@pytest.fixture
def wh(tmp_path):
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as warehouse:
        run(warehouse, MINI / "corpus", MINI / "judgments.jsonl", RunOptions())
    return path


# -- the lock is held only while writing ------------------------------------------------------------------------

@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_reads_succeed_while_a_run_computes(wh, tmp_path):
    running, gate = gated_run(wh, tmp_path, "gate")
    wait_started(running, gate)
    listed = assay(wh, "runs")
    report = assay(wh, "report", "latest", "--format", "json")
    counted = assay(wh, "sql", "SELECT COUNT(*) AS n FROM runs", "--format", "csv")
    assert running.proc.poll() is None  # all three answered while the run was still computing
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 3, listed.stderr  # header, rule, the run
    assert report.returncode == 0 and json.loads(report.stdout)["run"]["pipeline"] == "bm25", report.stderr
    assert counted.returncode == 0 and counted.stdout == "n\n1\n", counted.stderr
    gate.touch()
    rc, out, err = running.finish()
    assert rc == 0, err
    assert out.strip() in run_ids(wh) and len(run_ids(wh)) == 2


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_two_concurrent_runs_are_both_stored(wh, tmp_path):
    first, gate = gated_run(wh, tmp_path, "gate")
    second, _ = gated_run(wh, tmp_path, "gate")
    wait_started(first, gate)
    wait_started(second, gate)
    gate.touch()  # both finish their questions together and race for the write
    results = [first.finish(), second.finish()]
    assert [rc for rc, _, _ in results] == [0, 0], results
    stored = {out.strip() for _, out, _ in results}
    assert len(stored) == 2 and stored <= run_ids(wh)


# A program that is not assay holding the warehouse open, as a BI tool's DuckDB connection does.
HOLDER = "import sys, duckdb; con = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.readline()"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_held_lock_is_waited_for_then_named_in_one_line(wh):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(wh)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        t0 = time.monotonic()
        result = assay(wh, "runs", env={"ASSAY_LOCK_WAIT": "1"})
        waited = time.monotonic() - t0
    finally:
        holder.communicate("done\n", timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    waiting, error = result.stderr.splitlines()
    # its command line, cut at 120 characters
    named = f"PID {holder.pid} ({shlex.join([sys.executable, '-c', HOLDER, str(wh)])[:117]}...), not an assay command"
    assert waiting == f"{WAITING} {named} on {wh} (up to 1 s)..."
    assert error == (f"error: warehouse {wh} is locked by {named}, and stayed locked for 1 s; a program that holds the "
                     "warehouse open (a BI tool, a notebook) blocks every write to it: point it at the read-only "
                     f"snapshot {wh.with_name('w-bi.duckdb')} instead (`[warehouse] snapshot = true` in assay.toml "
                     "publishes it after each run, `assay snapshot` now; docs/bi.md) and close its connection, or set "
                     "ASSAY_LOCK_WAIT=SECONDS to wait longer")
    assert waited >= 1
    bad = assay(wh, "runs", env={"ASSAY_LOCK_WAIT": "soon"})
    assert bad.returncode == 1 and bad.stderr.splitlines() == [
        "error: ASSAY_LOCK_WAIT='soon' is not a number of seconds (0 or more)"]


@pytest.mark.parametrize("argv, assay_command", [
    (["/venv/bin/assay", "run"], True),
    (["/venv/bin/python3", "/venv/bin/assay", "sql", "SELECT 1"], True),
    (["python", "-m", "assay", "run"], True),
    (["python", "-m", "superset", "run"], False),
    (["python", "-c", "import duckdb; duckdb.connect('assay.duckdb')"], False),
    (["/opt/metabase/jre/bin/java", "-jar", "metabase.jar"], False),
    (["python", "train.py", "assay"], False),  # an argument named assay, past the program
    (None, None),  # /proc/PID/cmdline unreadable: not said either way
])
def test_a_lock_holder_is_an_assay_command_by_its_program(argv, assay_command):
    holder = LockHolder(4242, argv)
    assert holder.is_assay is assay_command
    said = {True: "another assay process (PID 4242)", None: "another process (PID 4242)"}
    assert str(holder) == said.get(assay_command, f"PID 4242 ({shlex.join(argv or [])}), not an assay command")


def test_the_lock_holder_is_read_from_duckdbs_error(wh):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(wh)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(duckdb.Error) as caught:
            duckdb.connect(str(wh))
        named = LockHolder.of(caught.value)
    finally:
        holder.communicate("done\n", timeout=60)
    assert (named.pid, named.argv, named.is_assay) == (holder.pid, [sys.executable, "-c", HOLDER, str(wh)], False)
    assert LockHolder.of(duckdb.IOException("Could not read enough bytes")) is None


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_waits_for_the_lock_at_its_write_and_is_stored(wh, tmp_path):
    running, gate = gated_run(wh, tmp_path, "gate")
    wait_started(running, gate)
    holder = duckdb.connect(str(wh))
    try:
        gate.touch()
        running.wait_for(WAITING)
    finally:
        holder.close()
    rc, out, lines = running.finish()
    assert rc == 0 and out.strip() in run_ids(wh)
    assert sum(WAITING in line for line in lines) == 1  # said once, however long it waited


# -- SIGINT: one line, exit 130, nothing half-written ---------------------------------------------------------

def test_sigint_while_a_run_computes(wh, tmp_path):
    running, gate = gated_run(wh, tmp_path, "gate")
    wait_started(running, gate)
    running.interrupt()
    rc, out, lines = running.finish()
    assert (rc, out) == (130, "")
    assert lines[-1] == "interrupted; nothing was written"
    assert not any("Traceback" in line or "Aborted" in line for line in lines)
    assert len(run_ids(wh)) == 1


def test_sigint_while_waiting_for_the_lock_writes_nothing(wh, tmp_path):
    running, gate = gated_run(wh, tmp_path, "gate")
    wait_started(running, gate)
    holder = duckdb.connect(str(wh))
    try:
        gate.touch()
        running.wait_for(WAITING)
        running.interrupt()
        rc, out, lines = running.finish()
    finally:
        holder.close()
    assert (rc, out, lines[-1]) == (130, "", "interrupted; nothing was written")
    assert len(run_ids(wh)) == 1


def _hits(wh, run_id) -> int:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return con.execute("SELECT COUNT(*) FROM hits WHERE run_id = ?", [run_id]).fetchall()[0][0]
    finally:
        con.close()


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.06])
def test_sigint_around_the_write_keeps_all_or_nothing(wh, tmp_path, delay):
    """The lock is released and SIGINT follows after ``delay``: whatever it hits, the run is stored whole or not
    at all, and the one line says which."""
    reference = _hits(wh, next(iter(run_ids(wh))))
    running = Assay(wh, "run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl")
    holder = duckdb.connect(str(wh))
    try:
        running.wait_for(WAITING)
    finally:
        holder.close()
    time.sleep(delay)
    running.interrupt()
    rc, out, lines = running.finish()
    if rc == 0:  # finished before the signal came
        assert out.strip() in run_ids(wh) and _hits(wh, out.strip()) == reference
        return
    assert rc == 130 and not any("Traceback" in line for line in lines), lines
    if lines[-1].startswith("interrupted after run "):
        run_id = lines[-1].removeprefix("interrupted after run ").removesuffix(" was stored")
        assert run_id in run_ids(wh) and _hits(wh, run_id) == reference
        # the signal may land before or after the run's id is printed: nothing else, and only that id
        assert out in ("", f"{run_id}\n"), (out, lines)
    else:
        assert out == "", (out, lines)
        assert lines[-1] == "interrupted; nothing was written"
        assert len(run_ids(wh)) == 1


@pytest.mark.slow  # embeds the demo corpus (chunks of 300) with the offline model, in two processes
def test_interrupted_embedding_resumes_where_it_stopped(tmp_path):
    wh = tmp_path / "dense.duckdb"
    args = ("run", "--pipeline", "dense", "--chunk-size", "300", "--corpus", DEMO / "corpus",
            "--judgments", DEMO / "judgments.jsonl")
    first = Assay(wh, *args)
    first.wait_for("stored 256 of ")
    first.interrupt()
    rc, out, lines = first.finish()
    assert (rc, out) == (130, "") and not any("Traceback" in line for line in lines)
    con = duckdb.connect(str(wh), read_only=True)
    try:
        kept = con.execute("SELECT COUNT(*) FROM embeddings").fetchall()[0][0]
        assert con.execute("SELECT COUNT(*) FROM runs").fetchall() == [(0,)]
    finally:
        con.close()
    assert kept >= 256
    assert lines[-1] == (f"interrupted; no run was written, and the {kept} embedding vectors computed so far "
                         "are stored for the next run to reuse")
    result = assay(wh, *args)
    assert result.returncode == 0, result.stderr
    stats = json.loads(assay(wh, "sql", "SELECT stats FROM runs", "--format", "json").stdout)[0]["stats"]
    embeddings = json.loads(stats)["embeddings"]
    assert embeddings["reused"] == kept and embeddings["computed"] < kept + embeddings["computed"]
    assert embeddings["computed"] + embeddings["reused"] >= 256


# -- damaged, read-only and odd files --------------------------------------------------------------------------

def _cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _damage_line(result, path):
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: warehouse {path} is damaged or truncated (")
    assert line.endswith("assay cannot repair it: restore it from a backup, or move it aside and the next "
                         "`assay run` starts a new warehouse")


@pytest.mark.parametrize("damage", ["random", "truncated", "header", "metadata"])
def test_a_damaged_warehouse_is_one_line(wh, tmp_path, damage):
    copy = tmp_path / "copy.duckdb"
    shutil.copy(wh, copy)
    size = copy.stat().st_size
    if damage == "random":
        copy.write_bytes(os.urandom(size))
    elif damage == "truncated":
        os.truncate(copy, 16384)  # a copy cut short: the header survives, the blocks it names do not
    else:
        with open(copy, "r+b") as f:
            f.seek(0 if damage == "header" else 4096)
            f.write(os.urandom(8192))
    for command in (["runs"], ["report", "latest"], ["sql", "SELECT 1"], ["ingest", MINI / "corpus"]):
        _damage_line(_cli(*command, "--warehouse", copy), copy)


def test_damage_found_by_a_query_is_one_line(wh, tmp_path):
    """Blocks the open does not read are only found by a query: every damaged copy reads whole or says one line."""
    size = wh.stat().st_size
    failed = 0
    for offset in range(3 * 4096, size, 1024 * 1024):
        copy = tmp_path / f"at{offset}.duckdb"
        shutil.copy(wh, copy)
        with open(copy, "r+b") as f:
            f.seek(offset)
            f.write(os.urandom(4096))
        result = _cli("report", "latest", "--format", "json", "--warehouse", copy)
        if result.exit_code != 0:
            _damage_line(result, copy)
            failed += 1
    assert failed > 0


def _as_nobody(fn):
    """Run ``fn`` in a child process without root's rights (as 'nobody'); returns what it returns, or its error."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            result = repr(fn())
        except BaseException as exc:
            result = f"{type(exc).__name__}: {exc}"
        os.write(w, result.encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        return f.read()


@pytest.fixture
def open_dir(tmp_path_factory):
    """A directory 'nobody' may enter (pytest's own are private to their owner)."""
    import tempfile

    path = tempfile.mkdtemp(prefix="assay-readonly-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_read_only_file_opens_for_reading(wh, open_dir):
    path = os.path.join(open_dir, "w.duckdb")
    shutil.copy(wh, path)
    os.chmod(path, 0o444)
    before = open(path, "rb").read()

    def read():
        try:
            open(path, "r+b").close()
            writable = True
        except PermissionError:
            writable = False
        with Warehouse.open(path, read_only=True) as warehouse:
            return writable, warehouse.con.execute("SELECT COUNT(*) FROM runs").fetchall()[0][0]

    assert _as_nobody(read) == "(False, 1)"
    assert open(path, "rb").read() == before and not os.path.exists(path + ".wal")


def test_a_read_only_old_warehouse_says_how_to_upgrade(open_dir):
    from assay.core.sqlfiles import load_sql

    path = os.path.join(open_dir, "old.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL)")
    con.execute(load_sql("migrations/001_init"))
    con.execute("INSERT INTO schema_migrations VALUES (1, 'init', now())")
    con.close()
    os.chmod(path, 0o444)

    def read():
        Warehouse.open(path, read_only=True).close()

    said = _as_nobody(read)
    assert said.startswith(f"WarehouseError: warehouse {path} has schema version 1, this assay needs ")
    assert said.endswith("and the file is read-only to you: make it writable and run `assay upgrade` once, or read "
                         "it with the assay version that wrote it")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "w.duckdb"
    os.mkfifo(fifo)
    for args in (["runs"], ["sql", "SELECT 1"], ["ingest", MINI / "corpus"]):
        result = assay(fifo, *args, timeout=120)  # a blocking open would hang until the timeout fails the test
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"error: warehouse {fifo} is a FIFO; give --warehouse the path of a warehouse file"]


def test_a_symlinked_warehouse_reads_through_the_link(wh, tmp_path):
    link = tmp_path / "link.duckdb"
    link.symlink_to(wh)
    result = _cli("runs", "--warehouse", link)
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3  # header, rule, the run


def test_a_run_that_fails_early_never_creates_the_warehouse(tmp_path):
    wh = tmp_path / "never.duckdb"
    result = _cli("run", "--corpus", "@nothing", "--judgments", MINI / "judgments.jsonl", "--warehouse", wh)
    assert result.exit_code == 1 and "no stored corpus named @nothing" in result.stderr
    assert not wh.exists()


def test_brief_warehouse_reads_hold_no_lock(wh):
    """Between statements a brief warehouse holds nothing: another connection writes in between."""
    brief = Warehouse.brief(wh)
    before = brief.con.execute("SELECT COUNT(*) FROM runs").fetchall()[0][0]
    con = duckdb.connect(str(wh))  # would fail on the lock if the read above had kept the file open
    con.execute("DELETE FROM run_stages")
    con.close()
    assert brief.con.execute("SELECT COUNT(*) FROM run_stages").fetchone() == (0,) and before == 1
    with pytest.raises(WarehouseError, match="no warehouse at"):
        Warehouse.open(wh.parent / "absent.duckdb", read_only=True)
