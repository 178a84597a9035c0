"""Every output escapes what it carries: hostile values from judgments, assay.toml and rules, through
real runs in a real warehouse, out of every renderer; and the escape functions' properties for any text."""

import csv
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core import escape
from assay.cli import cli
from conftest import MINI

# What the attempts put in user files.
HTML_PIPE = "<script>alert(1)</script>|x"
TERMINAL = "\x1b]0;pwned\x07\x1b[31mred\x9b2J\x00\x7f"  # OSC title + BEL, CSI, C1 CSI, NUL, DEL
NEWLINES = "two\nlines\x0cand\r\u2028more\u202e &\"'\x01x"  # XML 1.0 forbids \x0c and \x01
FORMULA = "=HYPERLINK(\"http://evil.example\",\"x\")"
HOSTILE_CLASSES = {"backup-readers": HTML_PIPE, "cache-size": TERMINAL, "page-size": NEWLINES, "restore": FORMULA,
                   "wal-purpose": "@SUM(1+1)"}
HOSTILE_QUERIES = {"page-size": "-2+3 what is the page size", "restore": "+how to restore",
                   "tulips": "when should tulips be planted in the page cache"}  # no_answer with hits: calibrate fits
PIPELINE = "evil\x1b]0;x\x07|<b>bold</b>`"
RAW_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def invoke(*args, **kw):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **kw)


def assert_no_raw_controls(text: str) -> None:
    """No control character but the renderer's own newlines (and no tab or CR at all)."""
    bad = sorted({hex(ord(c)) for c in RAW_CONTROL.findall(text)} | ({"\\t"} if "\t" in text else set())
                 | ({"\\r"} if "\r" in text else set()))
    assert not bad, f"raw control characters reach the output: {bad}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Two real bm25 runs (one through a pipeline named with escapes and HTML) on judgments whose hard
    classes and query texts are hostile, in a real DuckDB warehouse."""
    root = tmp_path_factory.mktemp("hostile")
    lines = []
    for line in (MINI / "judgments.jsonl").read_text().splitlines():
        obj = json.loads(line)
        obj["hard_class"] = HOSTILE_CLASSES.get(obj["query_id"], obj["hard_class"])
        obj["query"] = HOSTILE_QUERIES.get(obj["query_id"], obj["query"])
        lines.append(json.dumps(obj))
    judgments = root / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n")
    config = root / "assay.toml"
    config.write_text('[pipelines."evil\\u001b]0;x\\u0007|<b>bold</b>`"]\nextends = "bm25"\n')
    wh = root / "wh.duckdb"
    ids = []
    for extra in ([], ["--pipeline", PIPELINE, "--config", config, "--chunk-size", "120"]):
        out = invoke("run", "--corpus", MINI / "corpus", "--judgments", judgments, "--warehouse", wh, *extra)
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip().splitlines()[-1])
    return {"root": root, "wh": wh, "ids": ids, "judgments": judgments, "config": config}


def test_the_hostile_values_really_are_stored(hostile):
    report = json.loads(invoke("report", hostile["ids"][1], "--format", "json", "--warehouse", hostile["wh"]).stdout)
    assert report["run"]["pipeline"] == PIPELINE
    assert {f"hard_class={v}" for v in HOSTILE_CLASSES.values()} <= {r["slice"] for r in report["metrics"]}


@pytest.mark.parametrize("which", [0, 1])
def test_report_table_carries_no_raw_control_characters(hostile, which):
    out = invoke("report", hostile["ids"][which], "--warehouse", hostile["wh"])
    assert out.exit_code == 0
    assert_no_raw_controls(out.stdout)
    assert "hard_class=\\x1b]0;pwned\\x07\\x1b[31mred\\x9b2J\\x00\\x7f" in out.stdout  # visible, not acted on
    assert "hard_class=two\\nlines\\x0cand\\r\\u2028more\\u202e &\"'\\x01x" in out.stdout
    if which:  # after the verdict in words, the header
        assert out.stdout.split("\n\n", 1)[1].startswith(f"run {hostile['ids'][1]}  pipeline evil\\x1b]0;x\\x07|<b>bold</b>` (bm25")


def _md_rows(text: str) -> list[list[str]]:
    """The Markdown table rows of a text, each split into cells on unescaped pipes."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append(re.split(r"(?<!\\)\|", line)[1:-1])
    return rows


def test_report_markdown_keeps_every_table_whole_and_passes_no_html(hostile):
    out = invoke("report", hostile["ids"][1], "--format", "markdown", "--warehouse", hostile["wh"]).stdout
    assert_no_raw_controls(out)
    assert "<script>" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|x" in out
    assert "pipeline evil\\x1b]0;x\\x07\\|&lt;b&gt;bold&lt;/b&gt;\\`" in out
    tables, current = [], None
    for line in out.splitlines() + [""]:
        if line.startswith("|"):
            current = (current or []) + [line]
        elif current:
            tables.append(current)
            current = None
    assert len(tables) >= 3
    for table in tables:
        widths = {len(cells) for cells in _md_rows("\n".join(table))}
        assert len(widths) == 1, table  # every row as many cells as the header
    first_cells = [cells[0].strip() for cells in _md_rows(out)]
    for value in HOSTILE_CLASSES.values():  # each hostile slice is the first cell of one row of the breakdown
        assert escape.markdown_cell(f"hard_class={value}") in first_cells


def test_report_csv_neutralises_nothing_numeric_and_prints_no_controls(hostile):
    out = invoke("report", hostile["ids"][0], "--format", "csv", "--warehouse", hostile["wh"]).stdout
    assert_no_raw_controls(out.replace("\n", ""))
    rows = list(csv.DictReader(io.StringIO(out)))
    slices = {r["slice"] for r in rows}
    assert f"hard_class={HTML_PIPE}" in slices and f"hard_class={FORMULA}" in slices  # csv quotes the rest
    assert all(isinstance(float(r[k]), float) for r in rows for k in ("value", "ci_low", "ci_high") if r[k])
    assert not any(r["slice"].startswith(("=", "+", "-", "@")) for r in rows)


def test_report_of_two_runs_every_format(hostile):
    ids = hostile["ids"]
    table = invoke("report", *ids, "--warehouse", hostile["wh"]).stdout
    assert_no_raw_controls(table)
    md = invoke("report", *ids, "--format", "markdown", "--warehouse", hostile["wh"]).stdout
    assert_no_raw_controls(md)
    assert "<b>" not in md and "pipeline evil\\x1b]0;x\\x07\\|&lt;b&gt;" in md
    widths = {len(cells) for cells in _md_rows(md)}
    assert widths == {2 + len(ids) + 2}
    rows = list(csv.DictReader(io.StringIO(invoke("report", *ids, "--format", "csv", "--warehouse",
                                                  hostile["wh"]).stdout)))
    deltas = [float(r["delta"]) for r in rows if r["delta"]]  # a negative delta is a number, never quoted
    assert len(deltas) == len([r for r in rows if r["run_id"] == ids[1]])
    assert {r["run_id"] for r in rows} == set(ids)


def test_compare_table(hostile):
    out = invoke("compare", *hostile["ids"], "--warehouse", hostile["wh"])
    assert out.exit_code == 0, out.output
    assert_no_raw_controls(out.stdout)
    assert "B " + hostile["ids"][1] + " (evil\\x1b]0;x\\x07|<b>bold</b>`)" in out.stdout
    assert "hard_class=\\x1b]0;pwned" in out.stdout


def test_gate_text_and_junit_from_hostile_rules(hostile):
    junit = hostile["root"] / "gate.xml"
    # slices that exist (an unknown slice is a usage error); the second fails (its question's nDCG@10 is below 1
    # in this run), so the JUnit file carries a <failure> whose message holds the hostile text
    rules = [f"Success@3:doc[hard_class={HTML_PIPE}]>=0.1", f"nDCG@10[hard_class={NEWLINES}]>=1",
             f"Success@10[hard_class={FORMULA}]>=0.0"]
    args = [a for r in rules for a in ("--rule", r)]
    out = invoke("gate", hostile["ids"][1], *args, "--junit", junit, "--warehouse", hostile["wh"])
    assert out.exit_code == 6, out.output
    assert_no_raw_controls(out.stdout)
    assert "nDCG@10[hard_class=two\\nlines\\x0cand\\r\\u2028more\\u202e &\"'\\x01x]>=1" in out.stdout
    tree = ET.parse(junit)  # well-formed XML 1.0 despite the control characters
    cases = tree.getroot().findall(".//testcase")
    kept = NEWLINES.replace("\x0c", "\ufffd").replace("\x01", "\ufffd")
    assert [c.get("name") for c in cases] == [rules[0], f"nDCG@10[hard_class={kept}]>=1", rules[2]]
    assert tree.getroot().find("testsuite").get("name") == f"assay gate {hostile['ids'][1]}"
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == [f"nDCG@10[hard_class={kept}]>=1"]
    for case in cases:
        failure = case.find("failure")
        if failure is not None:
            assert failure.get("message") == failure.text and failure.text


def test_export_csv_cells_neutralised_numbers_kept(hostile):
    out_dir = hostile["root"] / "export-csv"
    out = invoke("export", *hostile["ids"], "--format", "csv", "--out", out_dir, "--warehouse", hostile["wh"])
    assert out.exit_code == 0, out.output
    with open(out_dir / "questions.csv", newline="", encoding="utf-8") as f:
        questions = list(csv.DictReader(f))
    classes = {q["query_id"]: q["hard_class"] for q in questions}
    assert classes["restore"] == "'" + FORMULA and classes["wal-purpose"] == "'@SUM(1+1)"
    assert classes["backup-readers"] == HTML_PIPE  # no formula prefix: exact text
    assert classes["page-size"] == NEWLINES  # an export keeps the exact text; csv quotes the newlines
    texts = {q["query_id"]: q["query_text"] for q in questions}
    assert texts["page-size"] == "'" + HOSTILE_QUERIES["page-size"] and texts["restore"] == "'+how to restore"
    for name in ("questions", "hits", "metrics", "per_query_metrics", "runs", "stage_attribution"):
        with open(out_dir / f"{name}.csv", newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                for cell in row:
                    assert not cell.startswith(("=", "+", "@", "\t", "\r")), (name, cell)
                    if cell.startswith("-"):
                        float(cell)  # only a negative number may start with '-'
    with open(out_dir / "metrics.csv", newline="", encoding="utf-8") as f:
        metrics = list(csv.DictReader(f))
    assert {f"hard_class={FORMULA}"} <= {m["slice"] for m in metrics}
    assert all(isinstance(float(m["value"]), float) for m in metrics if m["value"])


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_export_trec_refuses_an_id_with_whitespace_and_names_it(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(MINI / "corpus", corpus)
    (corpus / "ops" / "backup.rst").rename(corpus / "ops" / "back up.rst")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text((MINI / "judgments.jsonl").read_text().replace("ops/backup.rst", "ops/back up.rst"))
    wh = tmp_path / "wh.duckdb"
    assert invoke("run", "--corpus", corpus, "--judgments", judgments, "--warehouse", wh).exit_code == 0
    out = invoke("export", "latest", "--format", "trec", "--out", tmp_path / "trec", "--warehouse", wh)
    assert out.exit_code == 1
    assert "'ops/back up.rst" in out.stderr and "contains whitespace" in out.stderr
    assert not (tmp_path / "trec").exists() and not list(tmp_path.glob(".trec*"))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_sweep_table_and_csv(hostile):
    wh = hostile["root"] / "sweep.duckdb"
    args = ["sweep", "--corpus", MINI / "corpus", "--judgments", hostile["judgments"], "--config", hostile["config"],
            "--pipeline", PIPELINE, "--size", 200, "--size", 400, "--warehouse", wh]
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    assert_no_raw_controls(out.stdout)
    assert "evil\\x1b]0;x\\x07|<b>bold</b>`" in out.stdout
    rows = list(csv.DictReader(io.StringIO(invoke("report", "--sweep", "latest", "--format", "csv",
                                                  "--warehouse", wh).stdout)))
    assert rows and {r["pipeline"] for r in rows} == {"evil\\x1b]0;x\\x07|<b>bold</b>`"}
    md = invoke("report", "--sweep", "latest", "--format", "markdown", "--warehouse", wh).stdout
    assert_no_raw_controls(md)
    assert len({len(cells) for cells in _md_rows(md)}) == 1


def test_judgments_check_text(hostile):
    out = invoke("judgments", "check", hostile["judgments"], "--corpus", MINI / "corpus")
    assert out.exit_code == 0, out.output
    assert_no_raw_controls(out.stdout)
    assert "\\x1b]0;pwned\\x07" in out.stdout


def test_eval_trec_table_and_csv(tmp_path):
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_text("=cmd|\x1b[2J 0 d1 1\n")
    run.write_text("=cmd|\x1b[2J Q0 d1 1 0.5 t\n")
    table = invoke("eval-trec", qrels, run, "-m", "RR@10", "--per-query")
    assert table.exit_code == 0, table.output
    assert_no_raw_controls(table.stdout)
    assert "=cmd|\\x1b[2J" in table.stdout
    out = invoke("eval-trec", qrels, run, "-m", "RR@10", "--per-query", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert "'=cmd|\\x1b[2J" in {r["query_id"] for r in rows}


def test_history_regress_and_calibrate(hostile):
    wh, slice_ = hostile["wh"], f"hard_class={TERMINAL}"
    history = invoke("history", "--pipeline", PIPELINE, "--metric", "nDCG@10", "--slice", slice_, "--warehouse", wh)
    assert history.exit_code == 0, history.output
    assert_no_raw_controls(history.stdout)
    assert "for pipeline evil\\x1b]0;x\\x07|<b>bold</b>`" in history.stdout
    assert "hard_class=\\x1b]0;pwned" in history.stdout
    regress = invoke("regress", hostile["ids"][1], "--baseline", hostile["ids"][0], "--max-drop", "nDCG@10=0.5",
                     "--warehouse", wh)
    assert regress.exit_code in (0, 7), regress.output
    assert_no_raw_controls(regress.stdout)
    assert "  hard_class=\\x1b]0;pwned" in regress.stdout  # the slice column
    calibrate = invoke("calibrate", hostile["ids"][1], "--warehouse", wh)
    assert calibrate.exit_code == 0, calibrate.output
    assert_no_raw_controls(calibrate.stdout)
    assert "stage of pipeline evil\\x1b]0;x\\x07|<b>bold</b>`" in calibrate.stdout


# -- the escape functions, for any text -------------------------------------------------------
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
ANY = settings(max_examples=300, deadline=None, derandomize=True)


@ANY
@given(TEXT)
def test_terminal_leaves_no_control_character_and_keeps_printable_text(text):
    out = escape.terminal(text)
    assert not RAW_CONTROL.search(out) and "\t" not in out and "\n" not in out and "\r" not in out
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in out)
    out.encode("utf-8")  # printable to any UTF-8 terminal
    kept = "".join(c for c in text if c.isprintable() and c not in "\u202a\u202b\u202c\u202d\u202e")
    assert all(c in out for c in kept)
    if text.isprintable() and not RAW_CONTROL.search(text):
        assert out == text


@ANY
@given(TEXT)
def test_markdown_cell_is_one_cell_without_html(text):
    out = escape.markdown_cell(text)
    row = f"| {out} | next |"
    assert len(re.split(r"(?<!\\)\|", row)[1:-1]) == 2
    assert "<" not in out and ">" not in out and "\n" not in out
    assert not RAW_CONTROL.search(out)
    assert re.sub(r"\\(.)", "", out).count("`") == 0  # every backtick escaped
    assert "](" not in re.sub(r"\\\]", "", out)


def test_markdown_cell_examples():
    assert escape.markdown_cell(HTML_PIPE) == "&lt;script&gt;alert(1)&lt;/script&gt;\\|x"
    assert escape.markdown_cell("a\\|b") == "a\\\\\\|b"
    assert escape.markdown_cell("[0.100, 0.200]") == "[0.100, 0.200]"
    assert escape.markdown_cell("[x](javascript:alert(1))") == "[x\\](javascript:alert(1))"
    assert escape.markdown_cell("a\r\nb\nc") == "a b c"


@ANY
@given(st.one_of(TEXT, st.floats(allow_nan=False), st.integers(), st.none(), st.booleans()))
def test_csv_cell_neutralises_formulas_and_keeps_numbers(value):
    out = escape.csv_cell(value)
    if not isinstance(value, str):
        assert out is value
    elif value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        assert out == "'" + value
    else:
        assert out == value


def test_csv_cell_examples():
    assert escape.csv_cell(-0.05) == -0.05 and escape.csv_cell("-0.05") == "'-0.05"
    assert [escape.csv_cell(s) for s in ("=1+1", "+1", "@x", "\tx", "\rx", "a=1")] == [
        "'=1+1", "'+1", "'@x", "'\tx", "'\rx", "a=1"]
    assert escape.printed_csv_cell("\x1b[2J=x") == "\\x1b[2J=x" and escape.printed_csv_cell("=\x07") == "'=\\x07"


@ANY
@given(TEXT, TEXT)
def test_xml_text_and_attr_always_parse_back(text, attr):
    doc = f"<a x={escape.xml_attr(attr)}>{escape.xml_text(text)}</a>"
    element = ET.fromstring(doc.encode("utf-8"))
    allowed = lambda s: "".join(c if escape._xml_char_ok(ord(c)) else "\ufffd" for c in s)  # noqa: E731
    assert element.get("x") == allowed(attr)
    assert (element.text or "") == allowed(text).replace("\r\n", "\n").replace("\r", "\n")


@ANY
@given(TEXT)
def test_html_escapes_markup_in_text_and_attributes(text):
    out = escape.html(text)
    assert not set("<>\"'") & set(out)
    assert not any(0xD800 <= ord(c) <= 0xDFFF or ord(c) < 0x20 and c not in "\t\n\x0c\r" for c in out)
    import html as stdlib_html

    assert not RAW_BIDI.search(out)
    expected = "".join("\ufffd" if escape._html_forbidden(c) else escape.terminal(c) if RAW_BIDI.match(c) else c
                       for c in text)
    assert stdlib_html.unescape(out) == expected


def test_html_examples():
    assert escape.html("<a href=\"x\" onclick='y'>&</a>") == (
        "&lt;a href=&quot;x&quot; onclick=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;")
    assert escape.html("a\x00b\x1bc\ufffe") == "a\ufffdb\ufffdc\ufffd"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_runs_listing_and_error_lines_escape_control_characters(tmp_path):
    from click.testing import CliRunner

    from assay.cli import cli

    (tmp_path / "assay.toml").write_text('[pipelines."evil\\u001b]0;pwned\\u0007"]\nextends = "bm25"\n')
    wh = tmp_path / "w.duckdb"
    runner = CliRunner()
    from conftest import MINI

    out = runner.invoke(cli, ["run", "--corpus", str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl"),
                              "--config", str(tmp_path / "assay.toml"), "--pipeline", "evil\x1b]0;pwned\x07",
                              "--warehouse", str(wh)])
    assert out.exit_code == 0, out.output
    assert "\x1b" not in out.stderr and "\\x1b]0;pwned\\x07" in out.stderr
    listing = runner.invoke(cli, ["runs", "--warehouse", str(wh)])
    assert listing.exit_code == 0 and "\x1b" not in listing.stdout and "evil\\x1b]0;pwned\\x07" in listing.stdout
    bad = runner.invoke(cli, ["run", "--corpus", str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl"),
                              "--pipeline", "nope\x1b[2J", "--warehouse", str(wh)])
    assert bad.exit_code == 1 and "\x1b" not in bad.stderr and "nope\\x1b[2J" in bad.stderr


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_lake_listing_and_means_escape_a_hostile_pipeline_name(tmp_path):
    from click.testing import CliRunner

    from assay.cli import cli
    from conftest import MINI

    (tmp_path / "assay.toml").write_text('[pipelines."evil\\u001b]0;pwned\\u0007"]\nextends = "bm25"\n')
    runner, lake = CliRunner(), tmp_path / "lake"
    out = runner.invoke(cli, ["run", "--corpus", str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl"),
                              "--config", str(tmp_path / "assay.toml"), "--pipeline", "evil\x1b]0;pwned\x07",
                              "--lake", str(lake)])
    assert out.exit_code == 0, out.output
    for args in (["lake", "runs", str(lake)], ["lake", "compute", str(lake), "-m", "nDCG@10"]):
        shown = runner.invoke(cli, args)
        assert shown.exit_code == 0 and "\x1b" not in shown.stdout and "evil\\x1b]0;pwned\\x07" in shown.stdout, args


def test_html_shows_bidirectional_controls_as_their_escapes():
    assert escape.html("admin\u202egnp.exe\u2066x\u200f") == "admin\\u202egnp.exe\\u2066x\\u200f"
    assert escape.bidi_visible("<b>\u202e</b>") == "<b>\\u202e</b>"


def test_the_html_report_carries_no_bidirectional_control(hostile, tmp_path):
    """A hard class holding U+202E (RIGHT-TO-LEFT OVERRIDE) reaches the page's tables and its charts' labels: it
    shows as the six characters \\u202e, never as the control that would reorder the page."""
    assert "\u202e" in NEWLINES
    for ids in (hostile["ids"][:1], hostile["ids"]):
        page = tmp_path / "report.html"
        out = invoke("report", *ids, "--format", "html", "-o", page, "--warehouse", hostile["wh"])
        assert out.exit_code == 0, out.output
        text = page.read_text(encoding="utf-8")
        assert not RAW_BIDI.search(text), RAW_BIDI.search(text)
        assert "\\u202e" in text


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_a_newline_in_a_corpus_file_name_cannot_forge_an_error_line(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "fine.md").write_text("a document\n")
    (corpus / "a\nerror: forged.md").write_bytes(b"binary\0bytes")
    (corpus / "b\u202e\x1b[2J.md").write_bytes(b"binary\0bytes")
    out = invoke("ingest", corpus, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1, out.output
    assert _error_lines(out.stderr) == ["error: 2 corpus file(s) cannot be ingested:"], out.stderr
    assert f"  {corpus}/a\\nerror: forged.md: looks binary" in out.stderr
    assert f"  {corpus}/b\\u202e\\x1b[2J.md: looks binary" in out.stderr
    assert not RAW_CONTROL.search(out.stderr.replace("\n", ""))


def test_a_newline_in_a_file_name_cannot_forge_a_note_line(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "x\nerror: forged.txt").write_bytes("caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, d\u00e9j\u00e0 vu\n".encode("cp1252"))
    out = invoke("ingest", corpus, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 0, out.output
    assert not _error_lines(out.stderr), out.stderr
    assert f"note: {corpus}/x\\nerror: forged.txt: not UTF-8" in out.stderr


def test_a_control_character_in_a_url_is_refused_in_one_line(tmp_path):
    for url, shown in (("http://127.0.0.1:9/x\nerror: forged", "http://127.0.0.1:9/x\\nerror: forged"),
                       ("http://127.0.0.1:9/\u202egnp.exe", "http://127.0.0.1:9/\\u202egnp.exe")):
        out = invoke("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--pipeline", "http",
                     "--url", url, "--warehouse", tmp_path / "w.duckdb")
        assert out.exit_code == 1, out.output
        assert out.stderr == (f"error: pipeline 'http': url '{shown}' holds a control character; a URL has none "
                              "(percent-encode it: a newline is %0A)\n")
        assert not (tmp_path / "w.duckdb").exists()


def test_a_retriever_error_names_its_url_in_one_line():
    """Past the check of assay.toml (the Python API builds retrievers itself), the error line escapes the URL."""
    from assay.core.errors import RetrieverError
    from assay.retrieval.http_service import HttpRetriever

    retriever = HttpRetriever("http://127.0.0.1:9/x\nerror: forged", {"a.md": 0}, timeout_s=5)
    with pytest.raises(RetrieverError) as info:
        retriever.search("a question", 3, query_id="q1")
    assert "\n" not in str(info.value) and "HTTP retriever http://127.0.0.1:9/x\\nerror: forged (" in str(info.value)
