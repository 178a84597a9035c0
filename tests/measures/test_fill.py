"""Budgets a run cannot fill: the fields, their words, and every output that shows a budgeted measure.

The demo's final lists hold 1,537 to 3,902 tokens an answerable question (mean 3,145): every
question fills 1,000 tokens, five fall short of 2,000, and none reaches 4,000."""

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures import fill
from conftest import DEMO


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_fill_counts_short_questions_and_the_mean_shortfall():
    tokens = {"a": 1000, "b": 999, "c": 0}
    assert fill.fill(tokens, 1000) == {"budget_filled": False, "tokens_available": pytest.approx(1999 / 3),
                                       "shortfall": pytest.approx(1001 / 3), "questions_short": 2}
    assert fill.fill(tokens, 999)["questions_short"] == 1  # exactly the budget fills it
    assert fill.fill(tokens, 1, ["a", "b"]) == {"budget_filled": True, "tokens_available": 999.5, "shortfall": 0.0,
                                                "questions_short": 0}
    assert fill.fill(tokens, 5, ["nobody"]) == dict.fromkeys(fill.FIELDS)  # no question: nothing known


def test_the_words():
    row = {"metric": "SpanRecall@4000tok", "n": 56, "budget_filled": False, "tokens_available": 2950.4,
           "shortfall": 1049.6, "questions_short": 56}
    assert fill.note(row) == ("SpanRecall@4000tok (budget not filled: mean 2,950 tokens retrieved, shortfall 1,050; "
                              "56 of 56 questions short)")
    assert fill.describe({**row, "budget_filled": True, "shortfall": 0.0, "questions_short": 0}) == \
        "budget filled: mean 2,950 tokens retrieved; 0 of 56 questions short"
    assert fill.unfilled(row) and not fill.unfilled({**row, "budget_filled": True})
    assert not fill.unfilled({"metric": "nDCG@10", "budget_filled": None})


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's run, and a second one cut to 3 results a question (fewer tokens than any budget here)."""
    from assay.runs.demo import run_options
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp("fill") / "w.duckdb"
    with Warehouse.open(path) as wh:
        first = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", run_options())
        second = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(depth=3, doc_depth=3, final_k=3))
    return path, first.run_id, second.run_id


def _by_hand(path, run_id):
    """{query_id: tokens} of the final list, counted from the tokenizer's own pieces of each document: a result
    costs every piece that overlaps its chunk's span."""
    from assay.store.tokens import token_spans
    from assay.store.warehouse import Warehouse

    with Warehouse.open(path, read_only=True) as wh:
        docs = dict(wh.con.execute("SELECT doc_id, text FROM documents").fetchall())
        pieces = dict(zip(docs, token_spans(list(docs.values()))))
        hits = wh.con.execute(
            "SELECT h.query_id, c.doc_id, c.start_char, c.end_char FROM hits h JOIN runs r USING (run_id) "
            "JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id "
            "WHERE h.run_id = ? AND h.stage = 'final'", [run_id]).fetchall()
        answerable = [q for (q,) in wh.con.execute(
            "SELECT query_id FROM eval_questions WHERE run_id = ? AND answerable", [run_id]).fetchall()]
    out = dict.fromkeys(answerable, 0)
    for q, d, s, e in hits:
        if q in out:
            out[q] += sum(1 for ps, pe in pieces[d] if ps < e and s < pe)
    return out


def test_tokens_available_equal_the_tokenizer_pieces_of_the_final_list(demo):
    from assay.store.warehouse import Warehouse

    path, first, second = demo
    for run_id in (first, second):
        with Warehouse.open(path, read_only=True) as wh:
            assert fill.available(wh, run_id) == _by_hand(path, run_id)
    tokens = _by_hand(path, first)
    assert (len(tokens), min(tokens.values()), max(tokens.values())) == (56, 1537, 3902)


def _expected_note(path, run_id, budget):
    tokens = _by_hand(path, run_id)
    short = [t for t in tokens.values() if t < budget]
    mean = sum(tokens.values()) / len(tokens)
    return (f"SpanRecall@{budget}tok (budget not filled: mean {mean:,.0f} tokens retrieved, shortfall "
            f"{sum(budget - t for t in short) / len(tokens):,.0f}; {len(short)} of {len(tokens)} questions short)")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_report_marks_the_measure_and_says_the_shortfall_in_every_format(demo):
    path, run_id, _ = demo
    args = ("report", run_id, "-m", "SpanRecall@1000tok", "-m", "SpanRecall@4000tok", "-m", "nDCG@10",
            "--warehouse", path)
    table = invoke(*args).stdout.splitlines()
    assert any(line.startswith("SpanRecall@4000tok !  ") for line in table)
    assert any(re.match(r"SpanRecall@1000tok +0\.\d{3} ", line) for line in table)  # filled: no mark
    note = _expected_note(path, run_id, 4000)
    assert note == ("SpanRecall@4000tok (budget not filled: mean 3,145 tokens retrieved, shortfall 855; "
                    "56 of 56 questions short)")
    at = table.index(f"! {note}")
    assert table[at + 1].startswith("! a question whose results hold fewer tokens than the budget is scored on all")
    assert sum(line.startswith("! ") for line in table) == 2  # only the unfilled budget, nothing for 1000 or nDCG
    both = invoke(*args, "-m", "Success@4000tok").stdout.splitlines()  # measures of one budget share its line
    assert f"! SpanRecall@4000tok, Success@4000tok ({note.split(' (', 1)[1]}" in both
    assert f"! {note}" in invoke(*args, "--format", "markdown").stdout.splitlines()

    rows = json.loads(invoke(*args, "--format", "json").stdout)["metrics"]
    whole = {r["metric"]: r for r in rows if r["slice"] == "all"}
    tokens = _by_hand(path, run_id)
    mean = sum(tokens.values()) / 56
    assert whole["SpanRecall@4000tok"]["budget_filled"] is False
    assert whole["SpanRecall@4000tok"]["questions_short"] == 56
    assert whole["SpanRecall@4000tok"]["tokens_available"] == pytest.approx(mean)
    assert whole["SpanRecall@4000tok"]["shortfall"] == pytest.approx(4000 - mean)
    assert whole["SpanRecall@1000tok"]["budget_filled"] is True
    assert (whole["SpanRecall@1000tok"]["shortfall"], whole["SpanRecall@1000tok"]["questions_short"]) == (0.0, 0)
    assert all(whole["nDCG@10"][f] is None for f in fill.FIELDS)
    sliced = next(r for r in rows if r["metric"] == "SpanRecall@4000tok" and r["slice"] == "form=gap")
    assert sliced["questions_short"] == sliced["n"] == 24  # a slice's own questions

    lines = list(csv.DictReader(io.StringIO(invoke(*args, "--format", "csv").stdout)))
    cells = {(r["metric"], r["slice"]): r for r in lines}
    assert cells[("SpanRecall@4000tok", "all")]["budget_filled"] == "False"
    assert cells[("SpanRecall@4000tok", "all")]["questions_short"] == "56"
    assert float(cells[("SpanRecall@4000tok", "all")]["shortfall"]) == pytest.approx(4000 - mean)
    assert cells[("nDCG@10", "all")]["budget_filled"] == "" and cells[("SpanRecall@1000tok", "all")]["budget_filled"] \
        == "True"


def test_a_partly_filled_budget_counts_the_short_questions(demo):
    path, run_id, _ = demo
    out = invoke("report", run_id, "-m", "SpanRecall@2000tok", "--warehouse", path).stdout
    assert f"! {_expected_note(path, run_id, 2000)}" in out.splitlines()
    assert "5 of 56 questions short" in out


def test_several_runs_mark_the_run_that_fell_short(demo):
    path, first, second = demo
    args = ("report", first, second, "-m", "SpanRecall@1000tok", "-m", "Success@3", "--warehouse", path)
    text = invoke(*args).stdout.splitlines()
    row = next(line for line in text if line.startswith("SpanRecall@1000tok"))
    assert row.count(" !") == 1 and row.split("]")[2].lstrip().startswith("!")  # in run 2's cell
    tokens = _by_hand(path, second)
    short = sum(t < 1000 for t in tokens.values())
    assert short > 0 and any(line.startswith("! run 2: SpanRecall@1000tok (budget not filled: ")
                             and line.endswith(f"; {short} of 56 questions short)") for line in text)
    assert not any(line.startswith("! run 1:") for line in text)
    rows = json.loads(invoke(*args, "--format", "json").stdout)["rows"]
    budget = {r["run_id"]: r for r in rows if r["metric"] == "SpanRecall@1000tok"}
    assert budget[first]["budget_filled"] is True and budget[second]["budget_filled"] is False
    assert budget[second]["questions_short"] == short
    assert all(r["budget_filled"] is None for r in rows if r["metric"] == "Success@3")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_html_report_marks_and_warns(demo, tmp_path):
    pytest.importorskip("altair", reason="the html extra is not installed")
    path, first, second = demo
    out = tmp_path / "r.html"
    invoke("report", first, "-m", "SpanRecall@1000tok", "-m", "SpanRecall@4000tok", "--format", "html", "-o", out,
           "--warehouse", path)
    page = out.read_text()
    assert 'data-measure="SpanRecall@4000tok" data-level="chunk" data-budget="not filled"' in page
    assert 'data-measure="SpanRecall@1000tok" data-level="chunk" data-budget="filled"' in page
    assert f'<p class="warn budget">! {_expected_note(path, first, 4000)}</p>' in page
    invoke("report", first, second, "-m", "SpanRecall@1000tok", "--format", "html", "-o", out, "--warehouse", path)
    page = out.read_text()
    assert '<p class="warn budget">! run 2: SpanRecall@1000tok (budget not filled: ' in page
    assert "run 1: SpanRecall@1000tok" not in page


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_gate_rule_on_an_unfilled_budget_says_so_in_its_reason_and_junit(demo, tmp_path):
    from assay.verdicts import gate
    from assay.store.warehouse import Warehouse

    path, run_id, _ = demo
    junit = tmp_path / "gate.xml"
    out = invoke("gate", run_id, "--rule", "SpanRecall@4000tok>=0.7", "--rule", "SpanRecall@1000tok[form=gap]>=0.1",
                 "--rule", "nDCG@10>=0.5", "--junit", junit, "--warehouse", path)
    assert out.exit_code == 0, out.output
    words = _expected_note(path, run_id, 4000).split(" (", 1)[1].rstrip(")")
    row = next(line for line in out.stdout.splitlines() if re.match(r"PASS +SpanRecall@4000tok>=0\.7 ", line))
    assert row.endswith(f"0.821 >= 0.7; {words}")
    assert "budget" not in next(line for line in out.stdout.splitlines() if "SpanRecall@1000tok[form=gap]" in line)
    assert words in junit.read_text()
    with Warehouse.open(path, read_only=True) as wh:
        rules = [gate.parse_rule("SpanRecall@4000tok[form=gap]<0.9"), gate.parse_rule("Success@3:doc>=0.5")]
        results = gate.check(wh, run_id, rules, seed=0, samples=1000)
    assert (results[0]["budget_filled"], results[0]["questions_short"]) == (False, 24)  # the slice's own questions
    assert not set(fill.FIELDS) & set(results[1])  # a rule without a budget carries no budget fields


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_compare_marks_the_run_that_did_not_fill_a_standard_budget(demo):
    path, first, second = demo
    out = invoke("compare", first, second, "--warehouse", path)
    lines = out.stdout.splitlines()
    assert next(line for line in lines if line.startswith("SpanRecall@1000tok")).startswith("SpanRecall@1000tok !")
    assert not next(line for line in lines if line.startswith("nDCG@10 ")).count("!")
    tokens = _by_hand(path, second)
    assert all(t < 1000 for t in tokens.values())  # three results a question: no question fills 1,000 tokens
    assert any(line.startswith("! B: SpanRecall@1000tok, Success@1000tok, nDCG@1000tok (budget not filled: ")
               and line.endswith("56 of 56 questions short)") for line in lines)  # one line for the budget
    assert not any(line.startswith("! A:") for line in lines)
    budgets = json.loads(invoke("compare", first, second, "--format", "json", "--warehouse", path).stdout)["budgets"]
    assert set(budgets) == {"SpanRecall@1000tok", "Success@1000tok", "nDCG@1000tok"}
    assert budgets["nDCG@1000tok"]["a"]["budget_filled"] is True
    assert budgets["nDCG@1000tok"]["b"] == {"budget_filled": False, "questions_short": 56,
                                             "tokens_available": pytest.approx(sum(tokens.values()) / 56),
                                             "shortfall": pytest.approx(1000 - sum(tokens.values()) / 56)}


def test_regress_names_the_side_that_did_not_fill_a_guarded_budget(demo):
    path, first, second = demo
    args = ("regress", second, "--baseline", first, "--max-drop", "SpanRecall@1000tok=0.05", "--max-drop",
            "nDCG@10=0.05", "--warehouse", path)
    out = invoke(*args)
    lines = out.stdout.splitlines()
    tokens = _by_hand(path, second)
    mean = sum(tokens.values()) / 56
    assert lines[-2] == (f"! candidate: SpanRecall@1000tok (budget not filled: mean {mean:,.0f} tokens retrieved, "
                         f"shortfall {1000 - mean:,.0f}; 56 of 56 questions short)")
    assert "regression(s)" in lines[-1] and not any(line.startswith("! baseline") for line in lines)
    budgets = json.loads(invoke(*args, "--format", "json").stdout)["budgets"]
    assert set(budgets) == {"SpanRecall@1000tok"}  # nDCG@10 has no budget
    assert budgets["SpanRecall@1000tok"]["baseline"]["budget_filled"] is True
    assert budgets["SpanRecall@1000tok"]["candidate"]["questions_short"] == 56


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_history_marks_each_run_that_did_not_fill_the_budget_in_every_format(demo, tmp_path):
    path, first, second = demo
    base = ("history", "--pipeline", "bm25", "--warehouse", path)
    text = invoke(*base, "--metric", "SpanRecall@4000tok").stdout.splitlines()
    rows = {line.split()[0]: line for line in text if line.startswith((first, second))}
    assert all(re.search(r" 0\.\d{3} ! +\[", row) for row in rows.values())  # both runs fall short of 4,000
    assert f"! run {first}: {_expected_note(path, first, 4000)}" in text
    assert f"! run {second}: {_expected_note(path, second, 4000)}" in text
    assert next(line for line in text if line.startswith("! a question")).endswith("a smaller context.")

    text = invoke(*base, "--metric", "SpanRecall@1000tok").stdout.splitlines()
    rows = {line.split()[0]: line for line in text if line.startswith((first, second))}
    assert "!" not in rows[first] and " ! " in rows[second]  # the demo fills 1,000 tokens; depth 3 does not
    assert f"! run {second}: {_expected_note(path, second, 1000)}" in text
    assert not any(line.startswith(f"! run {first}") for line in text)
    assert not any(line.startswith("!") or " ! " in line for line in invoke(*base, "--metric", "nDCG@10").stdout.splitlines())

    tokens = _by_hand(path, first)
    mean = sum(tokens.values()) / 56
    points = {p["run_id"]: p for p in json.loads(invoke(*base, "--metric", "SpanRecall@4000tok", "--format",
                                                         "json").stdout)["points"]}
    assert points[first]["budget_filled"] is False and points[first]["questions_short"] == 56
    assert points[first]["tokens_available"] == pytest.approx(mean)
    assert points[first]["shortfall"] == pytest.approx(4000 - mean)
    points = {p["run_id"]: p for p in json.loads(invoke(*base, "--metric", "SpanRecall@1000tok", "--format",
                                                         "json").stdout)["points"]}
    assert (points[first]["budget_filled"], points[first]["shortfall"], points[first]["questions_short"]) == \
        (True, 0.0, 0)
    assert (points[second]["budget_filled"], points[second]["questions_short"]) == (False, 56)
    gap = json.loads(invoke(*base, "--metric", "SpanRecall@4000tok", "--slice", "form=gap", "--format",
                            "json").stdout)["points"]
    assert [p["questions_short"] for p in gap] == [p["n"] for p in gap] == [24, 24]  # the slice's own questions
    plain = json.loads(invoke(*base, "--metric", "nDCG@10", "--format", "json").stdout)["points"]
    assert all(p[f] is None for p in plain for f in fill.FIELDS)

    pytest.importorskip("altair", reason="the html extra is not installed")
    out = tmp_path / "h.html"
    invoke(*base, "--metric", "SpanRecall@1000tok", "--format", "html", "-o", out)
    page = out.read_text()
    assert f'<tr data-run="{first}" data-budget="filled">' in page
    assert f'<tr data-run="{second}" data-budget="not filled" class=drop>' in page  # the drop's row, marked too
    assert f'<p class="warn budget">! run {second}: {_expected_note(path, second, 1000)}</p>' in page
    assert f"run {first}: SpanRecall" not in page


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_export_carries_the_fields_on_budgeted_rows_and_nulls_elsewhere(demo, tmp_path, fmt):
    import duckdb

    path, first, _ = demo
    out = tmp_path / "export"
    assert invoke("export", first, "-m", "SpanRecall@4000tok", "--format", fmt, "--out", out,
                  "--warehouse", path).exit_code == 0
    con = duckdb.connect()

    def read(table):
        source = {"parquet": f"read_parquet('{out}/{table}/*/*.parquet')", "csv": f"read_csv('{out}/{table}.csv')",
                  "json": f"read_json('{out}/{table}.jsonl')"}[fmt]
        cur = con.execute(f"SELECT * FROM {source}")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    tokens = _by_hand(path, first)
    mean = sum(tokens.values()) / 56
    metrics = {(r["metric"], r["slice"]): r for r in read("metrics") if r["level"] == "chunk"}
    short = metrics[("SpanRecall@4000tok", "all")]
    assert (short["budget_filled"], short["questions_short"]) == (False, 56)
    assert (short["tokens_available"], short["shortfall"]) == (pytest.approx(mean), pytest.approx(4000 - mean))
    assert metrics[("SpanRecall@4000tok", "form=gap")]["questions_short"] == 24
    filled = metrics[("SpanRecall@1000tok", "all")]
    assert (filled["budget_filled"], filled["shortfall"], filled["questions_short"]) == (True, 0.0, 0)
    assert all(metrics[("nDCG@10", "all")][f] is None for f in fill.FIELDS)

    per_query = read("per_query_metrics")
    four = [r for r in per_query if r["metric"] == "SpanRecall@4000tok" and r["level"] == "chunk"]
    assert {r["query_id"]: r["tokens_available"] for r in four} == tokens  # each row its own question's tokens
    assert all((r["budget_filled"], r["shortfall"], r["questions_short"]) == (False, 4000 - tokens[r["query_id"]], 1)
               for r in four)
    one = [r for r in per_query if r["metric"] == "SpanRecall@1000tok"]
    assert one and all((r["budget_filled"], r["shortfall"], r["questions_short"]) == (True, 0, 0) for r in one)
    assert all(r[f] is None for r in per_query if r["metric"] == "nDCG@10" for f in fill.FIELDS)
