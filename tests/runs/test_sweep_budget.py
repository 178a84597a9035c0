"""`assay sweep` says which points could not reach its context budget, in every format, and reads precision and
IoU over the top k rather than within the budget."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures import fill
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.store.warehouse import Warehouse
from conftest import DEMO


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def short_sweep(tmp_path_factory):
    """200- and 1600-character chunks at a 4,000-token budget: the small chunks' lists cannot fill it."""
    path = tmp_path_factory.mktemp("sweep-budget") / "w.duckdb"
    out = invoke("sweep", "--corpus", DEMO / "corpus", "--judgments", DEMO / "judgments.jsonl", "--size", 200,
                 "--size", 1600, "--budget", 4000, "--format", "json", "--warehouse", path)
    assert out.exit_code == 0, out.output
    return path, json.loads(out.stdout)


def _short(path, run_id, budget):
    """How many answerable questions' final lists hold fewer than ``budget`` tokens, and their mean tokens."""
    with Warehouse.open(path, read_only=True) as wh:
        rows = wh.con.execute(
            "SELECT q.query_id, COALESCE(SUM(t.n_tokens), 0) FROM eval_questions q "
            "LEFT JOIN hits h ON h.run_id = q.run_id AND h.query_id = q.query_id AND h.stage = 'final' "
            "LEFT JOIN runs r ON r.run_id = h.run_id "
            "LEFT JOIN chunk_tokens t ON t.chunk_set = r.chunk_set AND t.chunk_id = h.chunk_id "
            "WHERE q.run_id = ? AND q.answerable GROUP BY q.query_id", [run_id]).fetchall()
    tokens = [int(t) for _, t in rows]
    return sum(t < budget for t in tokens), sum(tokens) / len(tokens), sum(max(0, budget - t) for t in tokens) / len(tokens)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_points_that_cannot_reach_the_budget_are_named(short_sweep):
    path, result = short_sweep
    small, large = result["points"]
    n_short, mean, shortfall = _short(path, small["run_id"], 4000)
    assert n_short > 0 and _short(path, large["run_id"], 4000)[0] == 0
    assert (small["budget_filled"], small["questions_short"]) == (False, n_short)
    assert small["tokens_available"] == pytest.approx(mean) and small["shortfall"] == pytest.approx(shortfall)
    assert (large["budget_filled"], large["questions_short"], large["shortfall"]) == (True, 0, 0.0)

    lines = invoke("report", "--sweep", "latest", "--warehouse", path).stdout.splitlines()
    row = next(line for line in lines if line.startswith("1  recursive 200/0"))
    assert row.count(" !") == 2  # SpanRecall@4000tok and Success@4000tok, not the top-k columns
    assert " !" not in next(line for line in lines if line.startswith("2  recursive 1600/0"))
    note = next(line for line in lines if line.startswith("! could not reach"))
    assert note == (f"! could not reach the 4000-token budget: point 1 (recursive 200/0, budget not filled: mean "
                    f"{mean:,.0f} tokens retrieved, shortfall {shortfall:,.0f}; {n_short} of 56 questions short). "
                    "A question short of 4000 tokens is scored on all its results hold, a smaller context.")
    assert note in invoke("report", "--sweep", "latest", "--format", "markdown", "--warehouse", path).stdout

    rows = list(csv.DictReader(io.StringIO(invoke("report", "--sweep", "latest", "--format", "csv",
                                                  "--warehouse", path).stdout)))
    cells = {(r["point"], r["measure"]): r for r in rows}
    assert cells[("1", "SpanRecall@4000tok")]["budget_filled"] == "False"
    assert cells[("1", "SpanRecall@4000tok")]["questions_short"] == str(n_short)
    assert cells[("2", "Success@4000tok")]["budget_filled"] == "True"
    assert cells[("1", "SpanIoU@5")]["budget_filled"] == ""  # a top-k measure has no budget


def test_a_sweep_whose_every_point_fills_the_budget_says_nothing(short_sweep):
    from assay.runs import sweep

    path, result = short_sweep
    filled = {**result, "points": [p for p in result["points"] if p["budget_filled"]]}
    assert sweep.unreached(filled) == [] and sweep.unreached(result) != []


def test_precision_and_iou_are_over_the_top_k_and_fall_with_chunk_size(short_sweep):
    path, result = short_sweep
    assert result["columns"] == ["SpanRecall@4000tok", "Success@4000tok", "SpanPrecision@5", "SpanIoU@5",
                                 "Success@5:doc"]
    with Warehouse.open(path, read_only=True) as wh:
        for p in result["points"]:
            for name in ("SpanPrecision@5", "SpanIoU@5"):
                values = per_query(wh, p["run_id"], parse_measure(name))
                assert p["measures"][name]["value"] == pytest.approx(sum(values.values()) / len(values))
    small, large = result["points"]
    for name in ("SpanPrecision@5", "SpanIoU@5"):  # larger chunks bring more text that is not gold
        assert small["measures"][name]["value"] > large["measures"][name]["value"]


def test_the_html_page_names_the_points(short_sweep, tmp_path):
    pytest.importorskip("altair", reason="the html extra is not installed")
    path, result = short_sweep
    out = tmp_path / "s.html"
    invoke("report", "--sweep", "latest", "--format", "html", "-o", out, "--warehouse", path)
    page = out.read_text()
    assert page.count('data-budget="not filled"') == 1 and page.count('data-budget="filled"') == 1
    assert '<p class="warn budget">! could not reach the 4000-token budget: point 1 (recursive 200/0, ' in page
    assert fill.MARK in page
