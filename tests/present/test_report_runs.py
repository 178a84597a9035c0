"""`assay report` of several runs, and of one run with --measure, on real demo runs in a real warehouse."""

import csv
import io
import json
import shutil

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.verdicts.comparison import compare
from assay.measures.compute import evaluate
from assay.measures.registry import parse_measure
from assay.verdicts.significance import holm
from assay.present.report import build_report
from assay.present.report_runs import ROW_FIELDS
from assay.runs.runner import RunOptions, run
from assay.verdicts.units import SPAN_ADVICE
from assay.store.warehouse import Warehouse
from conftest import DEMO, MINI

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """Three BM25 runs of the demo (chunk sizes 400, 800, 1600) and two with extractive answers."""
    path = tmp_path_factory.mktemp("report_runs") / "w.duckdb"
    with Warehouse.open(path) as wh:
        ids = {size: run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=size)).run_id for size in (400, 800, 1600)}
        answered = [run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=size, generator="extractive")).run_id
                    for size in (400, 1600)]
    return path, ids, answered


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def report_json(path, *args):
    out = invoke("report", *args, "--format", "json", "--warehouse", path)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def compare_p_values(path, first, other) -> dict:
    """{(metric, level): unadjusted p} of `assay compare FIRST OTHER`, overall."""
    with Warehouse.open(path, read_only=True) as wh:
        rows = compare(wh, first, other)["rows"]
    return {(r["metric"], r["level"]): r["p_value"] for r in rows if r["slice"] == "all"}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_table_exactly(demo):
    path, ids, _ = demo
    a, b, c = ids[400], ids[800], ids[1600]
    measures = [parse_measure("Success@3"), parse_measure("nDCG@10")]
    keys = [("Success@3", "chunk"), ("Success@3", "doc"), ("nDCG@10", "chunk"), ("nDCG@10", "doc")]
    with Warehouse.open(path, read_only=True) as wh:
        values = {}
        for rid in (a, b, c):
            seed = wh.con.execute("SELECT seed FROM runs WHERE run_id = ?", [rid]).fetchall()[0][0]
            values[rid] = {(r.metric, r.level): r for r in evaluate(wh, rid, measures, seed=seed) if r.slice == "all"}
    p = {rid: compare_p_values(path, a, rid) for rid in (b, c)}
    tests = [(rid, key) for key in keys for rid in (b, c)]
    adjusted = dict(zip(tests, holm([p[rid][key] for rid, key in tests])))

    def cell(rid, key):
        r = values[rid][key]
        mark = " "
        if rid != a and adjusted[(rid, key)] < 0.05:
            mark = "▲" if r.value > values[a][key].value else "▼"
        return f"{r.value:.3f}{mark} [{r.ci_low:.3f}, {r.ci_high:.3f}]"

    def line(key, test):
        values = "  ".join(cell(rid, key).rjust(len(rid)) for rid in (a, b, c))  # figures: right-aligned
        return f"{key[0]:<9}  {key[1]:<5}  {values}  56  {test}"

    header = f"metric     level  {a}  {b}  {c}   n  test"
    rule = "-" * (len(header) - len("test") + len("tango-score"))  # under the widest cell
    # the verdicts in words open the report: each later run on Success@3, the first measure asked for, at document
    # level since the runs rank different chunk sizes, with compare's paired interval and p and the table's Holm p
    # (their wording: tests/verdicts/test_verdict_text.py)
    verdicts = report_json(path, a, b, c, "-m", "Success@3", "--measure", "nDCG@10")["verdicts"]
    with Warehouse.open(path, read_only=True) as wh:
        for v, rid in zip(verdicts, (b, c), strict=True):
            head = next(r for r in compare(wh, a, rid)["rows"] if (r["metric"], r["level"], r["slice"]) == (
                "Success@3", "doc", "all"))
            assert (v["run_id"], v["measure"], v["level"]) == (rid, "Success@3", "doc")
            assert (v["ci_low"], v["ci_high"], v["p"], v["mdc"]) == (head["ci_low"], head["ci_high"],
                                                                   head["p_value"], head["mdc"])
            assert v["p_adjusted"] == adjusted[(rid, ("Success@3", "doc"))] and v["family_size"] == 8
            opening = f"Run {v['run']} ({rid}) is {'better' if head['ci_low'] > 0 else 'worse'} than run 1 ({a})"
            assert v["sentence"].startswith(opening) == (head["ci_low"] > 0 or head["ci_high"] < 0)
    expected = "\n".join([v["sentence"] for v in verdicts] + [
        "",
        f"run 1  {a}  pipeline bm25  chunker recursive(size=400, overlap=0)  71 questions  "
        "(the baseline: every other run is tested against it)",
        f"run 2  {b}  pipeline bm25  chunker recursive(size=800, overlap=0)  71 questions",
        f"run 3  {c}  pipeline bm25  chunker recursive(size=1600, overlap=0)  71 questions",
        "",
        "WARNING: retrieval units differ: run 1 ranks recursive(size=400, overlap=0) chunks, run 2 ranks "
        "recursive(size=800, overlap=0) chunks, run 3 ranks recursive(size=1600, overlap=0) chunks; " + SPAN_ADVICE,
        "",
        header,
        rule,
        line(keys[0], "tango-score"),
        line(keys[1], "tango-score"),
        line(keys[2], "score"),
        line(keys[3], "score"),
        "",
        "▲ / ▼: higher / lower than run 1 in a paired test (the test column), p < 0.05",
        "after Holm adjustment across the 8 test(s) of this table; no mark: no significant difference.",
        "Each cell is the run's value and its 95% interval, as in its own report; --format json has every",
        "delta (the run minus run 1: a drop is negative) and p-value.",
    ]) + "\n"
    out = invoke("report", a, b, c, "-m", "Success@3", "--measure", "nDCG@10", "--warehouse", path)
    assert out.exit_code == 0, out.output
    assert out.stdout == expected


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_marks_say_which_way_a_significant_difference_goes(demo):
    path, ids, _ = demo
    # on the demo, 800-character chunks find more at chunk level in the top 3 than 400 (McNemar's p < 0.05)
    p = compare_p_values(path, ids[400], ids[800])[("Success@3", "chunk")]
    assert p < 0.05
    up = invoke("report", ids[400], ids[800], "-m", "Success@3", "--level", "chunk", "--warehouse", path).stdout
    down = invoke("report", ids[800], ids[400], "-m", "Success@3", "--level", "chunk", "--warehouse", path).stdout
    assert "▲ [" in up and "▼" not in up.split("\n\n")[1]
    assert "▼ [" in down and "▲" not in down.split("\n\n")[1]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_values_equal_each_runs_own_report(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], ids[1600])
    assert [r["run_id"] for r in got["runs"]] == [ids[400], ids[800], ids[1600]]
    rows = {(r["metric"], r["level"], r["run_id"]): r for r in got["rows"]}
    for rid in ids.values():
        single = report_json(path, rid)
        overall = [r for r in single["metrics"] if r["slice"] == "all"]
        assert overall
        for r in overall:
            mine = rows.pop((r["metric"], r["level"], rid))
            assert {k: mine[k] for k in ("value", "n", "ci_low", "ci_high")} == {
                k: r[k] for k in ("value", "n", "ci_low", "ci_high")}
    assert rows == {}  # nothing in the table that a single report lacks


def test_deltas_are_against_the_first_run(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], ids[1600])
    first = {(r["metric"], r["level"]): r["value"] for r in got["rows"] if r["run_id"] == ids[400]}
    for r in got["rows"]:
        if r["run_id"] == ids[400]:
            assert r["delta"] is None and r["p_value"] is None and r["p_holm"] is None
        else:
            assert r["delta"] == pytest.approx(r["value"] - first[(r["metric"], r["level"])])


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_p_values_are_those_of_compare_then_holm_across_the_table(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], ids[1600])
    tested = [r for r in got["rows"] if r["p_value"] is not None]
    for rid in (ids[800], ids[1600]):
        expected = compare_p_values(path, ids[400], rid)
        mine = {(r["metric"], r["level"]): r["p_value"] for r in tested if r["run_id"] == rid}
        assert mine == expected  # every test compare makes, with the same p-value before adjustment
    assert got["significance"] == {"against": ids[400], "alpha": 0.05, "adjustment": "holm",
                                   "n_tests": len(tested)}
    assert [r["p_holm"] for r in tested] == holm([r["p_value"] for r in tested])
    # one family for the whole table: larger than compare's family of one pair
    assert len(tested) == 2 * len(compare_p_values(path, ids[400], ids[800]))


def test_level_keeps_that_level_and_single_level_measures(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], "--level", "doc", "-m", "nDCG@5", "-m", "Abstain")
    assert [(r["metric"], r["level"]) for r in got["rows"]] == [
        ("nDCG@5", "doc"), ("nDCG@5", "doc"), ("Abstain", "query"), ("Abstain", "query")]


def test_citation_and_claim_measures_are_shown_untested(demo):
    path, _, (a, b) = demo
    out = invoke("report", a, b, "-m", "answer_rate", "-m", "citation_precision", "-m", "faithfulness",
                 "--warehouse", path)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert next(x for x in lines if x.startswith("answer_rate ")).endswith("tango-score")
    assert next(x for x in lines if x.startswith("citation_precision ")).endswith("n/a")
    assert "citation_precision: n/a, one value per citation, not per question: nothing pairs across runs." in lines
    assert "faithfulness: n/a, one value per claim, not per question: nothing pairs across runs." in lines
    got = report_json(path, a, b, "-m", "answer_rate", "-m", "citation_precision")
    cp = [r for r in got["rows"] if r["metric"] == "citation_precision"]
    assert len(cp) == 2 and all(r["p_value"] is None and r["p_holm"] is None for r in cp)
    assert cp[1]["delta"] == pytest.approx(cp[1]["value"] - cp[0]["value"])
    assert got["measures"][1] == {"metric": "citation_precision", "test": None,
                                  "untested": "one value per citation, not per question: nothing pairs across runs"}
    assert got["significance"]["n_tests"] == 1


def test_measures_without_values_are_named_not_zeroed(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], "-m", "Success@3", "-m", "citation_precision")
    assert {r["metric"] for r in got["rows"]} == {"Success@3"}
    out = invoke("report", ids[400], ids[800], "-m", "Success@3", "-m", "citation_precision", "--warehouse", path)
    assert out.stdout.splitlines()[-1] == (
        "not computed for any of these runs (no values, not zero): citation_precision.")


def test_json_and_csv_shape(demo):
    path, ids, _ = demo
    args = (ids[400], ids[1600], "-m", "Success@3", "-m", "nDCG@10")
    got = report_json(path, *args)
    assert list(got) == ["runs", "warning", "measures", "significance", "verdicts", "rows"]
    assert got["runs"][1] == {"run_id": ids[1600], "pipeline": "bm25", "chunker": "recursive(size=1600, overlap=0)",
                              "n_questions": 71, "started_at": got["runs"][1]["started_at"],
                              "unit": "recursive(size=1600, overlap=0) chunks"}
    assert got["warning"].startswith("retrieval units differ: run 1 ranks recursive(size=400, overlap=0) chunks")
    assert [m["metric"] for m in got["measures"]] == ["Success@3", "nDCG@10"]
    assert [m["test"] for m in got["measures"]] == ["tango-score", "score"]
    assert all(list(r) == list(ROW_FIELDS) for r in got["rows"])
    assert [(r["metric"], r["level"], r["run_id"]) for r in got["rows"]] == [
        (m, lvl, rid) for m in ("Success@3", "nDCG@10") for lvl in ("chunk", "doc") for rid in (ids[400], ids[1600])]
    out = invoke("report", *args, "--format", "csv", "--warehouse", path)
    assert out.exit_code == 0
    table = list(csv.reader(io.StringIO(out.stdout)))
    assert table[0] == list(ROW_FIELDS)
    assert len(table) == 1 + len(got["rows"])
    for line, row in zip(table[1:], got["rows"]):
        assert line == ["" if row[k] is None else str(row[k]) for k in ROW_FIELDS]


def test_markdown(demo):
    path, ids, _ = demo
    out = invoke("report", ids[400], ids[800], "-m", "AP", "--format", "markdown", "--warehouse", path).stdout
    lines = out.splitlines()
    assert lines[0] == "## assay report: 2 runs"
    # the verdict, a paragraph: on AP at document level, since the runs rank different chunk sizes
    assert lines[2].startswith(f"Run 2 ({ids[800]}) ") and " on AP (doc)" in lines[2]
    assert lines[4].startswith(f"- run 1  {ids[400]}  pipeline bm25")
    assert f"| metric | level | {ids[400]} | {ids[800]} | n | test |" in lines
    assert "|---|---|---|---|---|---|" in lines
    assert sum(x.startswith("| AP | ") for x in lines) == 2


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_one_run_with_measures_is_its_report_restricted(demo):
    path, ids, _ = demo
    measures = [parse_measure("nDCG@5"), parse_measure("Success@3")]
    with Warehouse.open(path, read_only=True) as wh:
        expected = json.loads(json.dumps(build_report(wh, ids[800], measures), default=str))
        default = json.loads(json.dumps(build_report(wh, ids[800]), default=str))
    assert report_json(path, ids[800], "-m", "nDCG@5", "-m", "Success@3") == expected
    assert {r["metric"] for r in expected["metrics"]} == {"nDCG@5", "Success@3"}
    assert report_json(path, ids[800]) == default  # no --measure: today's report
    table = invoke("report", ids[800], "-m", "nDCG@5", "-m", "Success@3", "--warehouse", path).stdout
    assert "Abstain and FalseAbstain" not in table
    assert ("slice                            n  nDCG@5 (chunk)  nDCG@5 (doc)  Success@3 (chunk)  "
            "Success@3 (doc)") in table
    doc = report_json(path, ids[800], "-m", "nDCG@5", "--level", "doc")
    assert {r["level"] for r in doc["metrics"]} == {"doc"}


def test_the_same_measure_twice_is_reported_once(demo):
    path, ids, _ = demo
    got = report_json(path, ids[400], ids[800], "-m", "AP", "-m", " AP ", "-m", "nDCG")
    assert [m["metric"] for m in got["measures"]] == ["AP", "nDCG"]


@pytest.mark.parametrize("text", ["nDCG@x", "Success", "Bogus@3", "Abstain@5", "P@0"])
def test_measure_errors_are_the_registrys(demo, text):
    path, ids, _ = demo
    with pytest.raises(Exception) as exc:
        parse_measure(text)
    for args in ((ids[400],), (ids[400], ids[800])):
        out = invoke("report", *args, "-m", "AP", "-m", text, "--warehouse", path)
        assert out.exit_code == 1 and out.stdout == ""
        assert out.stderr == f"error: {exc.value}\n"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_incomparable_runs_are_refused(demo, tmp_path):
    path, ids, _ = demo
    copy = tmp_path / "w.duckdb"
    shutil.copy(path, copy)
    with Warehouse.open(copy) as wh:
        other = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions()).run_id
    out = invoke("report", ids[400], ids[800], other, "--warehouse", copy)
    assert out.exit_code == 1 and out.stdout == ""
    assert out.stderr.startswith(f"error: runs {ids[400]} and {other} are not comparable: judgments differ (")
    assert "; corpora differ (" in out.stderr.splitlines()[0]


def test_a_run_named_twice_is_refused(demo):
    path, ids, _ = demo
    out = invoke("report", ids[400], ids[400][:-1], "--warehouse", path)  # a unique prefix is the same run
    assert out.exit_code == 1
    assert out.stderr == f"error: run {ids[400]} is given twice; name each run once\n"


def test_no_warning_when_the_runs_rank_the_same_units(demo):
    path, ids, (answered_400, _) = demo
    got = report_json(path, ids[400], answered_400, "-m", "nDCG@10")
    assert got["warning"] is None and got["runs"][1]["unit"] == "recursive(size=400, overlap=0) chunks"
    out = invoke("report", ids[400], answered_400, "-m", "nDCG@10", "--warehouse", path)
    assert "WARNING" not in out.stdout
