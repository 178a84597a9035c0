"""`assay sql` is sandboxed: each attack that once worked is tried against a real warehouse file, and what it
aimed at (another warehouse, a system file, a loopback server, the network) is checked untouched or unread."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from conftest import MINI, ROOT


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    path = tmp_path_factory.mktemp("sql") / "w.duckdb"
    with Warehouse.open(path) as warehouse:
        run(warehouse, MINI / "corpus", MINI / "judgments.jsonl", RunOptions())
    return path


def sql(wh, query, *extra):
    return CliRunner().invoke(cli, ["sql", query, "--warehouse", str(wh), *extra], catch_exceptions=False)


def refused(result, *words):
    """The command failed with exit 1 and exactly one line on stderr, saying 'refused' and each of ``words``."""
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: refused"), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_copy_to_another_warehouse_leaves_it_untouched(wh, tmp_path):
    other = tmp_path / "other.duckdb"
    Warehouse.open(other).close()
    before = digest(other)
    refused(sql(wh, f"COPY (SELECT * FROM runs) TO '{other}'"), "COPY", "writes")
    refused(sql(wh, f"COPY (SELECT 1) TO '{tmp_path / 'new.csv'}' (FORMAT csv)"), "COPY")
    assert digest(other) == before and not (tmp_path / "new.csv").exists()


def test_export_database_writes_nothing(wh, tmp_path):
    refused(sql(wh, f"EXPORT DATABASE '{tmp_path / 'dump'}'"), "EXPORT", "writes files")
    assert not (tmp_path / "dump").exists()


@pytest.mark.parametrize("query", [
    "SELECT content FROM read_text('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd', sep=':', header=false)",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT file FROM glob('/etc/*')",
])
def test_system_files_are_not_read(wh, query):
    line = refused(sql(wh, query), "reads only the warehouse")
    assert "root:" not in line  # nothing of the file's content comes back, not even in the message


def test_a_path_as_a_table_name_is_only_a_name(wh):
    result = sql(wh, "SELECT * FROM '/etc/passwd'")  # with external access off, no replacement scan reads it
    assert result.exit_code == 1 and "root:" not in result.output
    assert result.stderr.splitlines() == ["error: SQL failed: Catalog Error: Table with name /etc/passwd does not exist!"]


def test_a_file_beside_the_warehouse_is_not_read(wh):
    secret = wh.parent / "secret.csv"
    secret.write_text("token\nhunter2\n")
    result = sql(wh, f"SELECT * FROM read_csv('{secret}')")
    refused(result, "secret.csv")
    assert "hunter2" not in result.output


def test_attach_of_another_file_is_refused(wh, tmp_path):
    other = tmp_path / "other.duckdb"
    Warehouse.open(other).close()
    before = digest(other)
    refused(sql(wh, f"ATTACH '{other}' AS other"), "ATTACH")
    # the same reach through a statement typed as a read: DuckDB's own guard stops it
    refused(sql(wh, f"SELECT * FROM read_blob('{other}')"), "reads only the warehouse")
    assert digest(other) == before


@pytest.fixture
def loopback():
    """A loopback HTTP server counting the requests it gets."""
    hits = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a,b\n1,2\n")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()


def test_no_extension_is_installed_or_loaded_and_no_url_is_fetched(wh, loopback, monkeypatch, tmp_path):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # where DuckDB would put a downloaded extension
    url, hits = loopback
    refused(sql(wh, "INSTALL httpfs"), "LOAD", "extension")
    refused(sql(wh, "LOAD httpfs"), "extension")
    refused(sql(wh, f"SELECT * FROM read_csv('{url}/x.csv')"))
    assert hits == [] and not (home / ".duckdb").exists()


def test_settings_are_locked(wh):
    refused(sql(wh, "SET enable_external_access = true"), "SET", "locked")
    refused(sql(wh, "RESET lock_configuration"), "SET")
    # a PRAGMA that switches a setting is refused by the shell itself: DuckDB 1.5's locked configuration lets
    # `PRAGMA enable_profiling` through (DuckDB 2's refuses it)
    for pragma in ("PRAGMA enable_profiling", "pragma Disable_Optimizer;", "PRAGMA\n  enable_progress_bar"):
        refused(sql(wh, pragma), "SET", "locked")
    assert sql(wh, "PRAGMA table_info('runs')").exit_code == 0  # a PRAGMA that reads is a read


def test_the_warehouse_stays_read_only(wh):
    before = digest(wh)
    refused(sql(wh, "DELETE FROM runs"), "DELETE", "read-only")
    refused(sql(wh, "CREATE TABLE t AS SELECT 1"), "CREATE", "read-only")
    refused(sql(wh, "CHECKPOINT; DROP TABLE hits"), "2 statements")
    assert digest(wh) == before


def test_exactly_one_statement_by_the_parser(wh):
    refused(sql(wh, "SELECT 1; SELECT 2"), "2 statements")
    refused(sql(wh, "SELECT 1; COPY runs TO '/tmp/x.csv'"), "2 statements")
    result = sql(wh, "SELECT 'a;b' AS s; ", "--format", "csv")  # a ';' in a string and a trailing one are fine
    assert result.exit_code == 0 and result.stdout == "s\na;b\n"
    empty = sql(wh, "  -- nothing  ")
    assert empty.exit_code == 1 and "0 statements" in empty.stderr


def test_the_table_escapes_stored_text_and_right_aligns_numbers(wh):
    query = ("SELECT * FROM (VALUES ('\x1b[31mred' || chr(27) || '[0m', 1.5, NULL, '12'), "
             "('[bold]a-much-longer-name[/]', 22.25, 3, '7')) t(name, x, n, digits)")
    out = sql(wh, query)
    assert out.exit_code == 0 and "\x1b" not in out.stdout
    assert out.stdout.splitlines() == [
        "name                             x     n  digits",
        "------------------------------------------------",
        "\\x1b[31mred\\x1b[0m            1.50  NULL  12",
        "[bold]a-much-longer-name[/]  22.25     3  7",
        "(2 rows)"]


def test_reads_still_work(wh):
    out = sql(wh, "SELECT COUNT(*) AS n FROM runs", "--format", "csv")
    assert out.exit_code == 0 and out.stdout == "n\n1\n"
    assert sql(wh, "DESCRIBE runs").exit_code == 0
    assert f"v{duckdb.__version__}" in sql(wh, "CALL pragma_version()").stdout


def test_csv_escapes_control_characters_and_neutralises_formulas(wh):
    """`--format csv` goes to a terminal or a spreadsheet: no raw ESC or BEL, no cell read as a formula."""
    query = ("SELECT * FROM (VALUES (chr(27) || ']8;;http://x' || chr(7) || 'click', "
             "'=HYPERLINK(\"http://x\",\"y\")', -0.05, 3, NULL), ('+1', '@SUM(A1)', 2.5, -4, 'a,b')) "
             "t(\"=name\", f, x, n, s)")
    out = sql(wh, query, "--format", "csv")
    assert out.exit_code == 0 and "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert out.stdout.splitlines() == [
        "'=name,f,x,n,s",
        "\\x1b]8;;http://x\\x07click,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-0.05,3,",
        "'+1,'@SUM(A1),2.50,-4,\"a,b\""]


ENDLESS = "SELECT COUNT(*) FROM range(10000000000) a, range(10) b"


def test_time_limit_interrupts_the_query(wh):
    t0 = time.monotonic()
    result = sql(wh, ENDLESS, "--timeout", "0.5")
    elapsed = time.monotonic() - t0
    assert result.exit_code == 1 and elapsed < 60  # the query alone would run for hours: the limit stopped it
    assert result.stderr.splitlines() == [
        "error: query stopped after 0.5 s, the time limit; narrow it, or give --timeout SECONDS a larger value"]
    bad = sql(wh, "SELECT 1", "--timeout", "nan")
    assert bad.exit_code == 2 and "must be a number greater than 0 and at most 86400, got nan" in bad.stderr


def _has_open(pid: int, path) -> bool:
    fd_dir = f"/proc/{pid}/fd"
    try:
        return any(os.path.realpath(os.path.join(fd_dir, fd)) == str(path) for fd in os.listdir(fd_dir))
    except FileNotFoundError:
        return False


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_ctrl_c_stops_an_endless_query(wh):
    proc = subprocess.Popen([sys.executable, "-m", "assay", "sql", ENDLESS, "--warehouse", str(wh)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 20
    while not _has_open(proc.pid, wh.resolve()):  # the warehouse is open: the query is about to run
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.02)
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - t0 < 60  # the query alone would run for hours: Ctrl-C stopped it
    assert (proc.returncode, out, err) == (130, "", "interrupted; nothing was written\n")
    # and the lock went with it: a writer opens the file at once
    con = duckdb.connect(str(wh))
    con.close()


def test_rows_printed_stop_at_max_rows_with_a_note(wh):
    """A 3,000,000-row result once printed every row (97.7 s, 1.2 GB): now the first --max-rows rows (default
    10000), fetched in batches, and a note on stderr saying more were left out and how to ask for them."""
    big = "SELECT i, 'row ' || i AS label FROM range(3000000) t(i)"
    out = sql(wh, big)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert len(lines) == 2 + 10000 + 1 and lines[-2].split() == ["9999", "row", "9999"]
    assert lines[-1] == "(first 10000 rows)"
    note = ("note: printed the first {} rows; the query gives more: narrow it (WHERE, LIMIT), or give --max-rows N "
            "to print more (`assay export` writes whole runs to files)")
    assert out.stderr.splitlines() == [note.format(10000)]
    few = sql(wh, big, "--max-rows", "3", "--format", "csv")
    assert (few.exit_code, few.stdout, few.stderr) == (0, "i,label\n0,row 0\n1,row 1\n2,row 2\n", note.format(3) + "\n")
    as_json = sql(wh, big, "--max-rows", "2", "--format", "json")
    assert json.loads(as_json.stdout) == [{"i": 0, "label": "row 0"}, {"i": 1, "label": "row 1"}]
    exact = sql(wh, "SELECT * FROM range(3) t(i)", "--max-rows", "3")  # all of it: no note
    assert exact.stdout.splitlines()[-1] == "(3 rows)" and exact.stderr == ""


def test_the_time_limit_covers_fetching_and_printing(wh):
    """DuckDB gives these rows at once; fetching and laying out a million wide rows takes seconds more. The
    limit once stopped only DuckDB's part: now the clock runs from the start to the last row formatted."""
    wide = "SELECT i, repeat('x', 200) AS a, repeat('y', 200) AS b, i * 1.5 AS c FROM range(1000000) t(i)"
    for fmt in ("table", "csv"):
        t0 = time.monotonic()
        result = sql(wh, wide, "--max-rows", "1000000", "--timeout", "0.3", "--format", fmt)
        assert time.monotonic() - t0 < 60
        assert (result.exit_code, result.stdout) == (1, ""), result.output[-300:]
        assert result.stderr.splitlines() == [
            "error: query stopped after 0.3 s, the time limit; narrow it, or give --timeout SECONDS a larger value"]


def test_memory_is_bounded_and_nothing_spills_beside_the_warehouse(wh):
    assert sql(wh, "SELECT current_setting('memory_limit') AS m", "--format", "csv").stdout == "m\n1.9 GiB\n"
    assert sql(wh, "SELECT current_setting('memory_limit') AS m", "--format", "csv",
               "--memory-mb", "100").stdout == "m\n95.3 MiB\n"
    before = sorted(p.name for p in wh.parent.iterdir())
    hungry = "SELECT i::VARCHAR || repeat('x', 20) AS k, COUNT(*) FROM range(20000000) t(i) GROUP BY k ORDER BY k"
    result = sql(wh, hungry, "--memory-mb", "64")
    assert (result.exit_code, result.stdout) == (1, ""), result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: query stopped at the memory limit of 64 MB (Out of Memory Error: ")
    assert line.endswith("); narrow it, or give --memory-mb MB a larger value")
    assert sorted(p.name for p in wh.parent.iterdir()) == before  # no .tmp directory of spilled blocks


def test_sql_bounds_come_from_assay_toml(wh, tmp_path):
    cfg = tmp_path / "assay.toml"
    cfg.write_text("[sql]\nmax_rows = 2\nmemory_mb = 100\n")
    query = "SELECT current_setting('memory_limit') AS m FROM range(5)"
    out = sql(wh, query, "--config", str(cfg), "--format", "csv")
    assert out.stdout == "m\n95.3 MiB\n95.3 MiB\n" and "the first 2 rows" in out.stderr
    given = sql(wh, query, "--config", str(cfg), "--format", "csv", "--max-rows", "1", "--memory-mb", "200")
    assert given.stdout == "m\n190.7 MiB\n"  # the command line wins
