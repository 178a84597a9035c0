"""`assay show` through click's CliRunner on real warehouse files: gold text between [[ ]] when stdout is not a
terminal, styled on one, the JSON form, errors that suggest the nearest ids, and hostile stored text shown as
the characters it is."""

import io
import json
import re

import pytest
from click.testing import CliRunner

from assay.present import show
from assay.cli import cli
from assay.present.drilldown import question_detail
from assay.store.warehouse import Warehouse
from conftest import MINI

MARKED = re.compile(r"\[\[(.*?)\]\]")
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
HOSTILE_DOC = ("# Notes\n\nThe \x1b[31mred\x1b[0m alarm \x1b]0;pwned\x07 rings when [bold]the disk is full[/bold] "
               "and :smile: nobody\tlooks.\n\nUnrelated closing words about tulips.\n")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _run(wh, corpus, judgments, *extra):
    out = invoke("run", "--corpus", corpus, "--judgments", judgments, "--warehouse", wh, *extra)
    assert out.exit_code == 0, out.output
    return out.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("show")
    wh = root / "w.duckdb"
    mini = (MINI / "corpus", MINI / "judgments.jsonl")
    ids = {"bm25": _run(wh, *mini, "--chunk-size", "120"),
           "hybrid": _run(wh, *mini, "--pipeline", "hybrid", "--chunk-size", "120", "--generator", "extractive")}
    corpus = root / "hostile"
    corpus.mkdir()
    (corpus / "alarm.md").write_text(HOSTILE_DOC)
    (corpus / "other.md").write_text("Tulips are planted in autumn, before the ground freezes.\n")
    judgments = root / "hostile.jsonl"
    judgments.write_text(json.dumps({
        "query_id": "alarm", "query": "when does the [red]alarm[/red] ring \x1b[2J", "category": "normal",
        "form": "match", "hard_class": "normal",
        "gold": [{"doc": "alarm.md", "quote": "rings when [bold]the disk is full[/bold]"}]}) + "\n")
    ids["hostile"] = _run(wh, corpus, judgments)
    return wh, ids


def _collapse(text):
    return " ".join(text.split())


def test_gold_text_is_between_double_brackets_exactly(runs):
    wh, ids = runs
    out = invoke("show", ids["bm25"], "page-size", "--depth", "3", "--warehouse", wh)
    assert out.exit_code == 0, out.output
    assert "[[Every page is 4096 bytes.]]" in out.stdout
    lines = out.stdout.splitlines()
    assert lines[0] == f"run {ids['bm25']} · pipeline bm25"
    assert lines[1] == "question page-size: what is the page size"
    assert '  0  storage/design.md [' in out.stdout and 'grade 1  "Every page is 4096 bytes."' in out.stdout


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("name", ["bm25", "hybrid"])
def test_every_marked_piece_is_the_gold_overlap_of_its_hit(runs, name):
    wh, ids = runs
    with Warehouse.open(wh, read_only=True) as source:
        qids = [q for q, in source.con.execute("SELECT query_id FROM run_queries WHERE run_id = ? ORDER BY 1",
                                               [ids[name]]).fetchall()]
        details = {q: question_detail(source, ids[name], q, depth=5) for q in qids}
    seen = 0
    for qid, detail in details.items():
        out = invoke("show", ids[name], qid, "--warehouse", wh).stdout
        wanted = []  # the marked pieces, in print order: each merged run of marks, whitespace collapsed
        for stage in detail["stages"]:
            for hit in stage["hits"]:
                for piece, gold in show._segments(hit["text"], hit["marks"]):
                    if gold:
                        wanted.append(_collapse(piece))
        assert MARKED.findall(out) == wanted, qid
        seen += len(wanted)
    assert seen > 0


def test_stages_print_in_pipeline_order_with_the_answer(runs):
    wh, ids = runs
    out = invoke("show", ids["hybrid"], "wal-purpose", "--depth", "2", "--warehouse", wh).stdout
    heads = [line.split(" · ")[0] for line in out.splitlines() if line.startswith("stage ")]
    assert heads == ["stage bm25", "stage dense", "stage fusion", "stage final"]
    assert re.search(r"^answer by the extractive generator: (answered|refused)", out, re.M)
    assert re.search(r"^  claim 0 (kept|dropped \(\w+\)): ", out, re.M)
    assert re.search(r"^    cites \S+#\d+-\d+, (valid|invalid \(\w+\)):", out, re.M)
    ranks = [int(m) for m in re.findall(r"^ +(\d+)  \S+  \S+  \S+#\d+-\d+", out, re.M)]
    # two hits in each of the four stages, and every stage's first relevant hit is among them (no line below the
    # depth for it)
    assert ranks == [1, 2] * 4 and "(below the depth: the stage's first relevant hit)" not in out


def test_stage_and_depth_choose_what_is_shown(runs):
    wh, ids = runs
    out = invoke("show", ids["hybrid"], "page-size", "--stage", "dense", "--depth", "1", "--warehouse", wh).stdout
    assert [line for line in out.splitlines() if line.startswith("stage ")] == [
        next(line for line in out.splitlines() if line.startswith("stage dense"))]
    hit_lines = re.findall(r"^ +(\d+)  \S+  \S+  \S+#\d+-\d+(.*)$", out, re.M)
    assert hit_lines[0][0] == "1" and all(r == "1" or "below the depth" in rest for r, rest in hit_lines)
    zero = invoke("show", ids["hybrid"], "page-size", "--depth", "0", "--warehouse", wh)
    assert zero.exit_code == 2 and "Invalid value for '--depth': must be an integer from 1" in zero.stderr
    bad = invoke("show", ids["hybrid"], "page-size", "--stage", "rerank", "--warehouse", wh)
    assert bad.exit_code == 2
    assert bad.stderr == f"error: --stage 'rerank': run {ids['hybrid']} has the stages bm25, dense, fusion, final\n"


def test_json_is_the_question_detail(runs):
    wh, ids = runs
    out = invoke("show", ids["hybrid"], "wal-purpose", "--format", "json", "--depth", "2", "--warehouse", wh)
    with Warehouse.open(wh, read_only=True) as source:
        detail = question_detail(source, ids["hybrid"], "wal-purpose", depth=2)
    assert json.loads(out.stdout) == json.loads(json.dumps(detail))
    one_stage = json.loads(invoke("show", ids["hybrid"], "wal-purpose", "--format", "json", "--stage", "final",
                                  "--warehouse", wh).stdout)
    assert [s["stage"] for s in one_stage["stages"]] == ["final"]


def test_without_a_query_id_it_lists_the_questions(runs):
    wh, ids = runs
    out = invoke("show", "latest", "--warehouse", wh).stdout.splitlines()
    assert out[0] == f"run {ids['hostile']}: 1 questions; `assay show {ids['hostile']} QUERY_ID` shows one"
    table = invoke("show", ids["bm25"], "--warehouse", wh).stdout.splitlines()
    assert table[1].split() == ["query", "id", "category", "form", "lost", "at", "first", "chunk", "first", "doc"]
    assert [line.split()[0] for line in table[3:]] == ["backup-readers", "cache-size", "page-size", "restore",
                                                         "tulips", "wal-purpose"]
    rows = json.loads(invoke("show", ids["bm25"], "--format", "json", "--warehouse", wh).stdout)
    assert [r["query_id"] for r in rows] == [line.split()[0] for line in table[3:]]


def test_unknown_ids_are_one_line_with_the_nearest_ids(runs):
    wh, ids = runs
    out = invoke("show", ids["bm25"], "page-sise", "--warehouse", wh)
    assert out.exit_code == 1
    assert out.stderr.startswith(f"error: run {ids['bm25']} has no question 'page-sise'; did you mean page-size")
    assert out.stderr.count("\n") == 1
    typo = ids["bm25"][:-2] + "zz"
    out = invoke("show", typo, "page-size", "--warehouse", wh)
    assert out.exit_code == 1
    assert out.stderr.startswith(f"error: no run '{typo}' in {wh}; did you mean {ids['bm25']}")
    assert "(`assay runs` lists them)" in out.stderr


def test_hostile_stored_text_shows_as_its_characters(runs):
    wh, ids = runs
    out = invoke("show", ids["hostile"], "alarm", "--warehouse", wh)
    assert out.exit_code == 0, out.output
    assert not RAW_CONTROL.findall(out.stdout)
    assert "question alarm: when does the [red]alarm[/red] ring \\x1b[2J" in out.stdout
    assert ("The \\x1b[31mred\\x1b[0m alarm \\x1b]0;pwned\\x07 [[rings when [bold]the disk is full[/bold]]] "
            "and :smile: nobody looks.") in out.stdout


def test_on_a_terminal_the_gold_span_is_styled_and_stored_escapes_stay_inert(runs):
    wh, ids = runs
    with Warehouse.open(wh, read_only=True) as source:
        detail = question_detail(source, ids["hostile"], "alarm")
    buffer = io.StringIO()
    terminal = show.console(file=buffer, force_terminal=True, color_system="standard", width=300)  # no wraps
    show.render(detail, terminal)
    text = buffer.getvalue()
    assert "[[" not in text and "\x1b[1;7;33mrings when [bold]the disk is full[/bold]\x1b[0m" in text
    assert "\\x1b[31mred\\x1b[0m" in text and "\x1b[31m" not in text and "\x07" not in text
    assert "[red]alarm[/red]" in text and ":smile:" in text


def test_a_terminal_without_styles_gets_the_brackets(runs):
    wh, ids = runs
    with Warehouse.open(wh, read_only=True) as source:
        detail = question_detail(source, ids["bm25"], "page-size")
    buffer = io.StringIO()
    show.render(detail, show.console(file=buffer, force_terminal=True, color_system=None, width=300))
    assert "[[Every page is 4096 bytes.]]" in buffer.getvalue() and "\x1b" not in buffer.getvalue()
