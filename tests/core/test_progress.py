"""Progress bars: drawn on a terminal's stderr, never on stdout, never in pipes, never under --quiet.

The CLI tests run `assay` in a subprocess whose stderr is the slave end of a pseudo-terminal (so it
is a terminal, as when a person watches) and whose stdout is a pipe (as in `RUN=$(assay run ...)`).
What arrives on the terminal is replayed through a small screen model to check that the bars are
erased when the work ends.
"""

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core import progress
from conftest import MINI, ROOT

ASSAY = [sys.executable, "-m", "assay"]
CSI = re.compile(rb"\x1b\[([0-9;?]*)([A-Za-z])")


def assay(*args, tty=True, env=None):
    """(exit code, stdout bytes, stderr bytes) of `assay ARGS`, stderr on a pseudo-terminal when ``tty``."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ASSAY_QUIET", "TERM", "NO_COLOR")}
    environ.update({"TERM": "xterm-256color", "COLUMNS": "160", "LINES": "40"}, **(env or {}))
    argv = ASSAY + [str(a) for a in args]
    if not tty:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=environ, cwd=ROOT,
                              timeout=300)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=environ,
                            cwd=ROOT)
    os.close(slave)
    received = []
    try:
        while True:  # drain the terminal as the process writes, or a full pty buffer would block it
            if select.select([master], [], [], 0.2)[0]:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the slave end
                    break
                if not data:
                    break
                received.append(data)
            elif proc.poll() is not None:
                break
        out = proc.stdout.read()
        proc.wait(timeout=300)
    finally:
        proc.stdout.close()
        os.close(master)
    return proc.returncode, out, b"".join(received)


def plain(data: bytes) -> str:
    """Everything that was written, escape sequences removed (bars included, even erased ones)."""
    return CSI.sub(b"", data).decode("utf-8", "replace").replace("\r", "")


def screen(data: bytes) -> list[str]:
    """What the terminal shows at the end: the lines left after cursor moves and erasures."""
    rows, row, col, i = [[]], 0, 0, 0
    while i < len(data):
        m = CSI.match(data, i)
        if m:
            params, op = m.group(1).decode(), m.group(2).decode()
            n = int(params) if params.isdigit() else 1
            if op == "K":
                rows[row] = [] if params == "2" else rows[row][:col]
            elif op == "A":
                row = max(0, row - n)
            elif op == "B":
                row += n
            elif op == "G":
                col = n - 1
            i = m.end()
            continue
        ch = data[i:i + 1]
        if ch == b"\r":
            col = 0
        elif ch == b"\n":
            row += 1
        elif ch != b"\x1b":
            # a UTF-8 character: take its continuation bytes with it
            end = i + 1
            while end < len(data) and 0x80 <= data[end] < 0xC0:
                end += 1
            ch = data[i:end]
            i = end - 1
            while len(rows) <= row:
                rows.append([])
            line = rows[row]
            line.extend([" "] * (col - len(line)))
            line[col:col + 1] = [ch.decode("utf-8", "replace")]
            col += 1
        while len(rows) <= row:
            rows.append([])
        i += 1
    return [s for s in ("".join(r).rstrip() for r in rows) if s]


def run_args(wh, *extra):
    return ("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--warehouse", wh, *extra)


# -- the CLI on a terminal ---------------------------------------------------------------------------


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_draws_each_long_step_on_stderr_and_erases_it(tmp_path):
    code, out, err = assay(*run_args(tmp_path / "w.duckdb", "--pipeline", "hybrid"))
    assert code == 0, err
    assert re.fullmatch(rb"\d{8}T\d{6}-[0-9a-f]{6}\n", out)  # stdout: the run id, nothing else
    drawn = plain(err)
    for step in ("reading corpus files", "chunking documents", "indexing chunks (bm25)", "embedding chunks",
                 "embedding questions", "asking questions"):
        assert step in drawn, step
    assert re.search(r"embedding chunks .*\d+/4 chunks", drawn)  # count of total, in the task's unit
    assert re.search(r"asking questions .*\d+/6 questions", drawn)
    assert "eta " in drawn
    assert "\x1b[?25h" in err.decode()  # the cursor is given back
    shown = screen(err)
    # transient: only the one-line messages stay, in order, none torn by a bar
    assert shown[0] == "resolved 6 gold entries for 6 questions against 4 documents"
    assert shown[-1].startswith("recorded run ")
    assert not any(s in line for line in shown for s in ("eta ", "━", "asking questions", "embedding chunks"))
    assert any(line.startswith("embedding 4 chunk texts with ") for line in shown)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_json_on_stdout_stays_clean_while_bars_draw(tmp_path):
    code, out, err = assay("sweep", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl",
                           "--size", "200", "--size", "400", "--format", "json", "--warehouse", tmp_path / "w.duckdb")
    assert code == 0, err
    result = json.loads(out)
    assert [p["point"] for p in result["points"]] == [1, 2]
    assert b"\x1b" not in out
    drawn = plain(err)
    assert re.search(r"sweep points .*\d/2 points", drawn)
    assert "asking questions" in drawn
    shown = screen(err)
    assert [line for line in shown if line.startswith("-- point")] == [
        "-- point 1/2: recursive 200/0, pipeline bm25",
        "-- point 2/2: recursive 400/0, pipeline bm25"]
    assert not any("sweep points" in line for line in shown)


def _trec_files(tmp_path, queries=40, depth=500):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{q} 0 d{q * 7 % depth} 1\n" for q in range(queries)))
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {1 - d / depth:.6f} t\n" for q in range(queries) for d in range(depth)))
    return qrels, run


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_eval_trec_shows_reading_the_run_file_and_prints_clean_json(tmp_path):
    qrels, run = _trec_files(tmp_path)
    code, out, err = assay("eval-trec", qrels, run, "-m", "nDCG@10", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows[-1]["metric"] == "nDCG@10" and rows[-1]["n"] == 40
    drawn = plain(err)
    assert "reading run.txt" in drawn and "reading qrels.txt" in drawn
    assert re.search(r"reading run\.txt .*/\d+(\.\d+)? [kM]B", drawn)  # bytes, shown as a size
    assert screen(err) == []  # eval-trec prints nothing else on stderr


def test_import_beir_shows_each_file_read(tmp_path):
    d = tmp_path / "tiny"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"document {i}"}) + "\n"
                                            for i in range(30)))
    (d / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "document 3"}) + "\n")
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    code, out, err = assay("import", "beir", d, "--warehouse", tmp_path / "w.duckdb")
    assert code == 0, err
    assert b"30 documents" in out
    drawn = plain(err)
    for step in ("reading corpus.jsonl", "hashing 30 documents", "reading test.tsv", "reading queries.jsonl"):
        assert step in drawn, step
    assert screen(err) == []


# -- not a terminal, or quiet ---------------------------------------------------------------------------


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_no_bars_when_stderr_is_not_a_terminal(tmp_path):
    code, out, err = assay(*run_args(tmp_path / "w.duckdb"), tty=False)
    assert code == 0, err
    assert b"\x1b" not in err and b"\r" not in err
    text = err.decode()
    assert "asking questions" not in text and "eta " not in text and "chunking documents" not in text
    assert text.splitlines()[0] == "resolved 6 gold entries for 6 questions against 4 documents"
    assert text.splitlines()[-1].startswith("recorded run ")
    assert re.fullmatch(rb"\d{8}T\d{6}-[0-9a-f]{6}\n", out)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_quiet_on_a_terminal_prints_nothing_but_the_result(tmp_path):
    wh = tmp_path / "w.duckdb"
    code, out, err = assay("--quiet", *run_args(wh))
    assert code == 0 and err == b""
    assert re.fullmatch(rb"\d{8}T\d{6}-[0-9a-f]{6}\n", out)
    code, out, err = assay(*run_args(wh), env={"ASSAY_QUIET": "1"})
    assert code == 0 and err == b""


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_quiet_keeps_warnings_and_errors(tmp_path):
    wh = tmp_path / "w.duckdb"
    code, out, err = assay("sweep", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl",
                           "--size", "300", "--overlap", "0", "--overlap", "300", "--format", "json",
                           "--warehouse", wh, env={"ASSAY_QUIET": "1"})
    assert code == 0, err
    assert screen(err) == ["note: skipped recursive size 300 overlap 300: the overlap must be smaller than the size"]
    assert b"sweep points" not in err and b"\x1b[" not in err
    json.loads(out)
    code, out, err = assay("--quiet", "report", "no-such-run", "--warehouse", wh)
    assert code == 1 and out == b""
    assert screen(err) == [f"error: no run 'no-such-run' in {wh}; `assay runs` lists them"]


# -- the facade -------------------------------------------------------------------------------------------


@pytest.fixture
def fresh():
    progress.reset()
    yield progress
    progress.reset()


def test_silent_by_default_and_rich_is_never_imported():
    code = ("import sys\n"
            "from assay.core import progress\n"
            "with progress.task('embedding chunks', total=10, unit='chunks') as t:\n"
            "    t.advance(3); t.advance(); t.update(total=12)\n"
            "    assert (t.completed, t.total, t.drawn) == (4, 12, False)\n"
            "list(progress.track(range(5), 'reading'))\n"
            "progress.say('recorded run x')\n"
            "assert 'rich' not in sys.modules, sorted(m for m in sys.modules if m.startswith('rich'))\n")
    master, slave = pty.openpty()  # even on a terminal: the library draws only when asked
    try:
        done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=slave, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0
    assert done.stdout == b""


def test_advance_counts_and_track_advances_once_per_item(fresh):
    with progress.task("x", total=None, unit="lines") as t:
        for _ in range(3):
            t.advance(2)
        t.update(completed=10)
        t.advance()
        assert t.completed == 11 and t.total is None and not t.drawn
    assert list(progress.track(iter("abc"), "letters", total=3)) == ["a", "b", "c"]


def test_say_drops_information_under_quiet_but_keeps_warnings(fresh, capsys):
    progress.configure(quiet=True)
    assert progress.quiet() and not progress.drawing()
    for line in ("recorded run 1", "note: a note", "warning: skipped: no model", "error: bad", "-- point 1/2"):
        progress.say(line)
    progress.say("waiting for the warehouse lock", warning=True)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["note: a note", "warning: skipped: no model", "error: bad",
                                         "waiting for the warehouse lock"]
    progress.configure(quiet=False)
    progress.say("recorded run 1")
    assert capsys.readouterr().err == "recorded run 1\n"


class _Terminal:
    """A stand-in stderr that says it is a terminal."""

    def __init__(self):
        self.written = []

    def isatty(self):
        return True

    def write(self, text):
        self.written.append(text)
        return len(text)

    def flush(self):
        pass


def test_draws_only_on_a_terminal_and_not_when_quiet_or_dumb(fresh, monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    progress.configure()
    assert not progress.drawing()  # pytest's captured stderr is not a terminal
    monkeypatch.setattr(sys, "stderr", _Terminal())
    progress.configure()
    assert progress.drawing()
    progress.configure(quiet=True)
    assert not progress.drawing()
    monkeypatch.setenv("TERM", "dumb")
    progress.configure()
    assert not progress.drawing()


def test_nested_tasks_share_one_display_that_goes_when_the_last_ends(fresh, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress.configure(draw=True)
    with progress.task("sweep points", total=2, unit="points") as outer:
        display = progress._display
        assert outer.drawn and display is not None
        with progress.task("embedding chunks", total=4, unit="chunks") as inner:
            assert progress._display is display and len(display.task_ids) == 2
            inner.advance(4)
            assert display.tasks[1].completed == 4
            progress.say("recorded run 1")  # printed through the display's console, above the bars
        assert len(display.tasks) == 1
        outer.advance()
    assert progress._display is None
    assert not outer.drawn
    assert "recorded run 1" in "".join(terminal.written)


def test_close_erases_the_display_and_open_tasks_go_on_counting(fresh, monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    progress.configure(draw=True)
    with progress.task("asking questions", total=3, unit="questions") as t:
        t.advance()
        progress.close()  # what the CLI does before it prints an error
        assert progress._display is None and not t.drawn
        t.advance()
        assert t.completed == 2
    assert progress._display is None


def test_polling_sets_completed_from_a_function_while_drawn(fresh, monkeypatch):
    import threading

    monkeypatch.setattr(sys, "stderr", _Terminal())
    progress.configure(draw=True)
    seen = threading.Event()

    def completed():
        seen.set()
        return 50

    with progress.task("reading run.txt", total=100, unit="bytes") as t:
        with t.polling(completed, every=0.01):
            assert seen.wait(5)
        assert t.completed == 50
    progress.configure(draw=False)
    with progress.task("reading run.txt", total=100, unit="bytes") as t, t.polling(completed):
        pass  # undrawn: no thread
    assert t.completed == 0


def test_the_rich_columns_show_count_rate_and_time(fresh, monkeypatch):
    from rich.progress import Task as RichTask

    count, rate, timing = progress._columns()
    task = RichTask(0, "embedding chunks", 629, 412, _get_time=lambda: 10.0, fields={"unit": "chunks"})
    assert count().render(task).plain == "412/629 chunks"
    task = RichTask(1, "reading run.txt", None, 12_345, _get_time=lambda: 10.0, fields={"unit": "lines"})
    assert count().render(task).plain == "12,345 lines"
    assert timing().render(task).plain.endswith(" elapsed")
    task = RichTask(2, "reading run.txt", 94_800_000, 51_200_000, _get_time=lambda: 10.0, fields={"unit": "bytes"})
    assert count().render(task).plain == "51.2 MB/94.8 MB"
    task = RichTask(3, "hashing", None, 0, _get_time=lambda: 10.0, fields={"unit": None})
    assert count().render(task).plain == "" and rate().render(task).plain == ""
    assert progress._clock(3723) == "1:02:03"
