"""The SQL read of history and comparison values on a DuckDB source (assay.analytics.direct) gives the rows of the
Ibis expressions, and history, compare, regress and report give the figures of the code before issue 14's speed
work: means, intervals and p-values computed here with the reference statistics (tests/measures/reference_stats.py)
over per_query's values, compared with ==. Real demo runs: one with its values stored, one without (the measure
SQL computes them), one stored again."""

import pytest
from scipy.stats import chi2

from measures import reference_stats as reference
from assay.verdicts import regression
from assay.analytics import connect, direct
from assay.analytics.history import ordered_runs, series
from assay.analytics.pairing import paired
from assay.verdicts.comparison import compare, metric_kind
from assay.measures.compute import SLICE_FIELDS, evaluate, per_query, question_labels
from assay.measures.registry import DEFAULT_MEASURES, parse_measure
from assay.verdicts.inference import infer
from assay.verdicts.regression import history, regress
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from conftest import DEMO

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"
SLICES = ["all", "form=gap", "category=no_answer", "hard_class=prose-free", "hard_class=None", "form=", "colour=x"]
MEASURES = [("nDCG@10", "chunk"), ("Success@3", "doc"), ("Abstain", "query"), ("AP", "doc")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("direct") / "w.duckdb"
    with Warehouse.open(path) as wh:
        runs = [run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=size)).run_id for size in (800, 300, 500)]
        wh.con.execute("DELETE FROM measure_values WHERE run_id = ?", [runs[1]])
    wh = Warehouse.open(path, read_only=True)
    yield wh, runs
    wh.close()


@pytest.fixture
def through_ibis(monkeypatch):
    """Make the callers take the Ibis expressions, as on a Spark lake."""
    monkeypatch.setattr(direct, "holds_duckdb", lambda source: False)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("slice_", SLICES)
@pytest.mark.parametrize("name, level", MEASURES)
def test_pipeline_values_are_the_ibis_series(demo, name, level, slice_):
    wh, runs = demo
    measure = parse_measure(name)
    con = connect(wh)
    got_runs, got = direct.pipeline_values(wh, "bm25", measure, level, slice_)
    assert got_runs == ordered_runs(con, "bm25")
    expr = series(wh, con, runs, measure, level, slice_)
    want = regression._values_by_run(con.to_pyarrow(expr)) if expr is not None else {}
    assert got == want
    assert direct.pipeline_values(wh, "bm25", measure, level, slice_, only=runs[1:2])[1] == \
        {r: v for r, v in want.items() if r == runs[1]}


@pytest.mark.parametrize("slices", [True, False])
def test_paired_values_are_the_ibis_pairs(demo, slices):
    wh, runs = demo
    measures = [parse_measure(m) for m, _ in MEASURES] + [parse_measure("citation_precision")]
    con = connect(wh)
    for a, b in ((runs[0], runs[1]), (runs[1], runs[2])):
        want: dict = {}
        for p in con.to_pyarrow(paired(wh, con, a, b, measures, slices)).to_pylist():
            want.setdefault((p["measure"], p["level"], p["slice"]), []).append((p["unit"], p["a"], p["b"]))
        assert direct.paired_values(wh, a, b, measures, slices) == {k: sorted(v) for k, v in want.items()}


def test_run_values_are_the_ibis_values(demo):
    """What a sweep's table reads for its points' runs (stored values, and the run whose values were deleted)."""
    from assay.analytics.values import values

    wh, runs = demo
    measures = [parse_measure(m) for m, _ in MEASURES] + [parse_measure("citation_precision")]
    con = connect(wh)
    want: dict = {}
    for v in con.to_pyarrow(values(wh, con, runs, measures)).to_pylist():
        want.setdefault((v["run_id"], v["measure"], v["level"]), []).append((v["unit"], v["value"]))
    got = direct.run_values(wh, runs, measures)
    assert got == {k: sorted(v) for k, v in want.items()}
    assert {run for run, _, _ in got} == set(runs)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_history_regress_and_compare_read_the_same_either_way(demo, monkeypatch):
    wh, runs = demo
    drops = [(parse_measure("nDCG@10"), "chunk", 0.01), (parse_measure("Success@3"), "doc", 0.01)]
    budgeted = [("SpanRecall@1000tok", "chunk"), ("Success@4000tok", "chunk")]  # history marks the unfilled budgets
    fast = ([history(wh, "bm25", m, lvl, s) for m, lvl in MEASURES + budgeted for s in ("all", "form=gap")],
            compare(wh, runs[0], runs[1]), regress(wh, runs[2], "best", drops))
    monkeypatch.setattr(direct, "holds_duckdb", lambda source: False)
    slow = ([history(wh, "bm25", m, lvl, s) for m, lvl in MEASURES + budgeted for s in ("all", "form=gap")],
            compare(wh, runs[0], runs[1]), regress(wh, runs[2], "best", drops))
    assert fast == slow
    marks = [[p["budget_filled"] for p in h["points"]] for h in fast[0][-4:]]
    assert marks[0] == [True, False, True] and marks[2] == [False, False, False]  # chunk 300 alone falls short of 1,000


def _slices(labels, values):
    """{slice: sorted units} as evaluate and the pairing form them."""
    out = {"all": sorted(values)}
    for field in SLICE_FIELDS:
        for unit in sorted(values):
            out.setdefault(f"{field}={labels[unit.split('|')[0]][field]}", []).append(unit)
    return out


def test_history_points_are_the_reference_figures(demo):
    wh, runs = demo
    for name, level in MEASURES:
        measure = parse_measure(name)
        h = history(wh, "bm25", name, level)
        assert [p["run_id"] for p in h["points"]] == runs
        for p in h["points"]:
            vals = [v for (u, lvl), v in sorted(per_query(wh, p["run_id"], measure).items()) if lvl == level]
            low, high = (reference.bootstrap_mean(vals, 0) if measure.family.interval == "bootstrap"
                         else reference_wilson(vals))
            assert (p["value"], p["n"], p["ci_low"], p["ci_high"]) == (sum(vals) / len(vals), len(vals), low, high)


def reference_wilson(vals):
    from assay.measures.stats import wilson

    return wilson(sum(vals), len(vals))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_report_rows_are_the_reference_figures(demo):
    wh, runs = demo
    for run_id in runs[:2]:
        labels = question_labels(wh, run_id)
        got = {(r.metric, r.level, r.slice): r for r in evaluate(wh, run_id, DEFAULT_MEASURES, seed=0, samples=1000)}
        want = 0
        for measure in DEFAULT_MEASURES:
            values = per_query(wh, run_id, measure)
            for level in measure.levels:
                by_unit = {u: v for (u, lvl), v in values.items() if lvl == level}
                for name, units in _slices(labels, by_unit).items():
                    if not units:
                        continue
                    vals = [by_unit[u] for u in units]
                    low, high = (reference.bootstrap_mean(vals, 0, 1000) if measure.family.interval == "bootstrap"
                                 else reference_wilson(vals))
                    row = got[(measure.name, level, name)]
                    assert (row.value, row.n, row.ci_low, row.ci_high) == (sum(vals) / len(vals), len(vals), low, high)
                    want += 1
        assert want == len(got)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_compare_rows_are_the_reference_figures(demo):
    wh, runs = demo
    a, b = runs[0], runs[1]
    result = compare(wh, a, b)
    rows = {(r["metric"], r["level"], r["slice"]): r for r in result["rows"]}
    labels = question_labels(wh, a)
    checked = reused = 0
    for measure in DEFAULT_MEASURES:
        if measure.family.unit != "question":
            continue
        va, vb = per_query(wh, a, measure), per_query(wh, b, measure)
        for level in measure.levels:
            both = {u for (u, lvl) in va if lvl == level and (u, lvl) in vb}
            for name, units in _slices(labels, both).items():
                if not units:
                    continue
                before, after = [va[(u, level)] for u in units], [vb[(u, level)] for u in units]
                # the inference is tested against scipy in tests/verdicts/test_inference.py; here
                # the pairs the direct path reads are the per-question values, question by question
                inf = infer(before, after, alpha=0.05)
                low, high, p = inf.low, inf.high, inf.p_value
                if metric_kind(measure) == "binary":
                    won = sum(1 for x, y in zip(before, after) if y > x)
                    lost = sum(1 for x, y in zip(before, after) if y < x)
                    mcnemar = chi2.sf((won - lost) ** 2 / (won + lost), 1) if won + lost else 1.0
                    assert p == pytest.approx(mcnemar, rel=1e-9, abs=1e-15)
                row = rows[(measure.name, level, name)]
                n = len(units)
                assert (row["n"], row["a"], row["b"], row["delta"], row["ci_low"], row["ci_high"], row["p_value"]) == \
                    (n, sum(before) / n, sum(after) / n, (sum(after) - sum(before)) / n, low, high, p)
                checked += 1
                reused += name != "all" and units == sorted(both)
    assert checked == len(result["rows"]) and reused  # Abstain's category=no_answer holds all its questions
    unadjusted = ("metric", "level", "n", "a", "b", "delta", "ci_low", "ci_high", "test", "p_value")
    assert [rows[("Abstain", "query", s)][k] for k in unadjusted for s in ("category=no_answer", "all")] == \
        [rows[("Abstain", "query", "all")][k] for k in unadjusted for _ in (0, 1)]


def _quadratic_drop(series, tolerance):
    """The lasting-drop search as history made it before (every prefix's best against every suffix's)."""
    for i in range(1, len(series)):
        prior_best = max(series[:i], key=lambda p: p["value"])
        if max(p["value"] for p in series[i:]) < prior_best["value"] - tolerance:
            return {"run_id": series[i]["run_id"], "value": series[i]["value"], "prior_best": prior_best["value"],
                    "prior_best_run": prior_best["run_id"]}
    return None


def test_the_lasting_drop_is_the_quadratic_search():
    import random

    rng = random.Random(3)
    for case in range(400):
        n = rng.randint(0, 30)
        grid = rng.choice([None, 0.05, 0.25])  # values on a grid give ties
        series = [{"run_id": f"r{i:02d}", "value": round(rng.random() / grid) * grid if grid else rng.random()}
                  for i in range(n)]
        for tolerance in (0.0, 0.02, 0.3):
            assert regression.lasting_drop(series, tolerance) == _quadratic_drop(series, tolerance), (case, tolerance)
