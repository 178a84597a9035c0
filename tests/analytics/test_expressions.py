"""Each analytics expression against an independent computation in plain Python over per_query values, on real
demo runs: once with the values stored in measure_values, once computed by the measure SQL, once mixed."""

import pytest

from assay.analytics import connect, opened
from assay.analytics.history import ordered_runs, series
from assay.analytics.pairing import paired
from assay.analytics.rollups import STEPS, fusion_effect, loss_funnel
from assay.analytics.sweeps import point_values
from assay.analytics.values import values
from assay.core.errors import AssayError
from assay.measures.compute import SLICE_FIELDS, evaluate, per_query, question_labels
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, run
from assay.runs.sweep import run_sweep
from assay.store.warehouse import Warehouse
from conftest import DEMO, MINI

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"
MEASURES = [parse_measure(m) for m in ("Success@3", "nDCG@10", "AP", "SpanRecall@1000tok", "Abstain")]


def store(wh, run_id, measures, stage="final"):
    """What the run writer does for the default measures: per_query's values, as measure_values rows."""
    for m in measures:
        rows = [(run_id, stage, level, unit.split("|")[0], m.name, m.family.name, m.cutoff, m.budget, unit, value)
                for (unit, level), value in per_query(wh, run_id, m, stage).items()]
        if rows:
            wh.con.executemany("INSERT INTO measure_values VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """Three bm25 demo runs (chunk sizes 800, 300, 500), a 2-point sweep and a hybrid run on the mini corpus.
    Only the first run has stored values (of MEASURES); the others are computed by the measure SQL."""
    path = tmp_path_factory.mktemp("analytics") / "w.duckdb"
    with Warehouse.open(path) as wh:
        runs = [run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=size)).run_id for size in (800, 300, 500)]
        hybrid = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("hybrid", chunk_size=120)).run_id
        spec = {"chunkers": ["recursive"], "sizes": [300, 600], "overlaps": [0], "pipelines": ["bm25"],
                "budget": 1000, "k": 5, "select": "SpanRecall@1000tok", "alpha": 0.05}
        sweep_id = run_sweep(wh, CORPUS, JUDGMENTS, spec, RunOptions())
        wh.con.execute("DELETE FROM measure_values")  # whatever the writer stored: this test decides
        store(wh, runs[0], MEASURES)
    wh = Warehouse.open(path, read_only=True)
    yield wh, runs, hybrid, sweep_id
    wh.close()


def _python_values(wh, run_id, measure, level):
    return {u: v for (u, lvl), v in per_query(wh, run_id, measure).items() if lvl == level}


def test_connect_gives_the_warehouse_tables_and_views(demo):
    wh, runs, _, _ = demo
    names = ("runs", "run_queries", "queries", "measure_values", "eval_questions", "stage_attribution",
             "complete_runs", "sweep_points")
    # Ibis reads the very tables: each row count is DuckDB's own (the names are fixed here, not user input)
    stored = {name: wh.con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in names}
    assert stored["runs"] == 6 and min(stored.values()) > 0
    con = connect(wh)
    assert {name: con.table(name).count().to_pyarrow().as_py() for name in names} == stored
    assert connect(con) is con
    with pytest.raises(AssayError, match="holds no connection"):
        connect(Warehouse.brief(wh.path))


def test_opened_reads_a_brief_warehouse(demo):
    wh, runs, _, _ = demo
    with opened(Warehouse.brief(wh.path)) as (brief, con):
        assert con.to_pyarrow(con.table("runs").count()).as_py() == 6


@pytest.mark.parametrize("measure", MEASURES, ids=str)
def test_values_stored_and_computed_equal_per_query(demo, measure):
    wh, runs, _, _ = demo
    con = connect(wh)
    got = con.to_pyarrow(values(wh, con, runs[:2], [measure])).to_pylist()
    for run_id in runs[:2]:
        mine = {(r["unit"], r["level"]): r["value"] for r in got if r["run_id"] == run_id}
        assert mine == pytest.approx(per_query(wh, run_id, measure))
        assert all(r["query_id"] == r["unit"] and r["measure"] == measure.name for r in got)


def test_the_stored_run_reads_measure_values(demo):
    wh, runs, _, _ = demo
    con = connect(wh)
    from assay.analytics.values import stored

    assert stored(con, runs, [m.name for m in MEASURES]) == {(runs[0], m.name) for m in MEASURES}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("slice_", ["all", "form=gap"])
def test_history_series_and_points_against_python(demo, slice_):
    from assay.verdicts.regression import history

    wh, runs, _, _ = demo
    measure = parse_measure("nDCG@10")
    con = connect(wh)
    ordered = ordered_runs(con, "bm25")
    assert [r["run_id"] for r in ordered][:3] == runs  # the sweep's runs come after
    got = con.to_pyarrow(series(wh, con, runs, measure, "chunk", slice_)).to_pylist()
    for run_id in runs:
        labels = question_labels(wh, run_id)
        want = {q: v for q, v in _python_values(wh, run_id, measure, "chunk").items()
                if slice_ == "all" or f"{slice_.split('=')[0]}={labels[q][slice_.split('=')[0]]}" == slice_}
        assert {r["unit"]: r["value"] for r in got if r["run_id"] == run_id} == pytest.approx(want)
    # the points are evaluate()'s rows for the slice (what history computed before Ibis)
    h = history(wh, "bm25", "nDCG@10", None, slice_)
    for p in h["points"][:3]:
        seed = wh.con.execute("SELECT seed FROM runs WHERE run_id = ?", [p["run_id"]]).fetchall()[0][0]
        row = [r for r in evaluate(wh, p["run_id"], [measure], seed=seed) if r.level == "chunk" and r.slice == slice_][0]
        assert (p["n"], p["value"], p["ci_low"], p["ci_high"]) == pytest.approx((row.n, row.value, row.ci_low, row.ci_high))


def test_history_of_a_slice_no_question_is_in_has_no_points(demo):
    wh, runs, _, _ = demo
    con = connect(wh)
    assert series(wh, con, runs, parse_measure("AP"), "doc", "colour=blue") is None
    assert con.to_pyarrow(series(wh, con, runs, parse_measure("AP"), "doc", "form=nothing-like-it")).num_rows == 0


@pytest.mark.parametrize("slices", [True, False])
def test_pairing_against_python(demo, slices):
    wh, runs, _, _ = demo
    con = connect(wh)
    a, b = runs[0], runs[1]  # a stored, b computed
    measures = MEASURES + [parse_measure("citation_precision")]  # citations do not pair: no rows
    got = con.to_pyarrow(paired(wh, con, a, b, measures, slices)).to_pylist()
    labels = question_labels(wh, a)
    want = set()
    for m in MEASURES:
        va, vb = per_query(wh, a, m), per_query(wh, b, m)
        for (q, level), x in va.items():
            if (q, level) not in vb:
                continue
            names = ["all"] + ([f"{f}={labels[q][f]}" for f in SLICE_FIELDS] if slices else [])
            want |= {(m.name, level, name, q, x, vb[(q, level)]) for name in names}
    mine = {(r["measure"], r["level"], r["slice"], r["unit"], r["a"], r["b"]) for r in got}
    assert len(got) == len(mine) == len(want)
    want_values = {t[:4]: t[4:] for t in want}
    assert {t[:4] for t in mine} == set(want_values)
    for t in mine:
        assert t[4:] == pytest.approx(want_values[t[:4]])


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_compare_is_the_same_whether_values_are_stored_or_computed(demo, tmp_path):
    import shutil

    from assay.verdicts.comparison import compare

    wh, runs, _, _ = demo
    copy = tmp_path / "copy.duckdb"
    shutil.copy(wh.path, copy)
    with Warehouse.open(copy) as other:
        store(other, runs[1], MEASURES)
        other.con.execute("DELETE FROM measure_values WHERE run_id = ?", [runs[0]])
    with Warehouse.open(copy, read_only=True) as other:
        swapped = compare(other, runs[0], runs[1], MEASURES[:2])
    mixed = compare(wh, runs[0], runs[1], MEASURES[:2])
    assert [(r["metric"], r["level"], r["slice"], r["n"], r["test"]) for r in swapped["rows"]] == \
        [(r["metric"], r["level"], r["slice"], r["n"], r["test"]) for r in mixed["rows"]]
    for x, y in zip(swapped["rows"], mixed["rows"]):
        assert (x["a"], x["b"], x["p_value"]) == pytest.approx((y["a"], y["b"], y["p_value"]))


def test_regress_best_baseline_is_the_highest_python_mean(demo):
    from assay.verdicts.regression import _means

    wh, runs, _, _ = demo
    measure = parse_measure("Success@3")
    means = _means(wh, runs, measure, "doc")
    for run_id in runs:
        vals = _python_values(wh, run_id, measure, "doc")
        assert means[run_id] == pytest.approx(sum(vals.values()) / len(vals))


def test_rollups_equal_the_views_and_a_python_count(demo):
    wh, runs, hybrid, _ = demo
    con = connect(wh)
    every = runs + [hybrid]
    funnel = con.to_pyarrow(loss_funnel(con, every)).to_pylist()
    rows = wh.con.execute("SELECT run_id, query_id, in_bm25, in_dense, in_fusion, lost_at FROM stage_attribution "
                          "WHERE run_id IN (?, ?, ?, ?)", every).fetchall()
    counts = {}
    for run_id, _, _, _, _, lost_at in rows:
        counts[(run_id, lost_at)] = counts.get((run_id, lost_at), 0) + 1
    assert {(r["run_id"], r["lost_at"]): r["n"] for r in funnel} == counts
    assert all(r["step"] == STEPS.index(r["lost_at"]) + 1 for r in funnel)
    view = wh.con.execute("SELECT run_id, lost_at, n FROM loss_funnel WHERE run_id IN (?, ?, ?, ?)", every).fetchall()
    assert {(r, lost): n for r, lost, n in view} == counts
    effect = con.to_pyarrow(fusion_effect(con, every)).to_pylist()
    rescued = sum(1 for r, _, b, d, f, _ in rows if r == hybrid and f == 1 and (b == 0 or d == 0))
    lost = sum(1 for r, _, b, d, f, _ in rows if r == hybrid and f == 0 and (b == 1 or d == 1))
    assert effect == [{"run_id": hybrid, "rescued": rescued, "lost": lost}]  # bm25 runs have no fusion
    assert wh.con.execute("SELECT rescued, lost FROM fusion_effect WHERE run_id = ?", [hybrid]).fetchall() == \
        [(rescued, lost)]


def test_sweep_point_values_against_python(demo):
    wh, _, _, sweep_id = demo
    con = connect(wh)
    measure = parse_measure("SpanRecall@1000tok")
    got = con.to_pyarrow(point_values(wh, con, sweep_id, [measure])).to_pylist()
    for point, run_id in wh.con.execute("SELECT point, run_id FROM sweep_points WHERE sweep_id = ?",
                                        [sweep_id]).fetchall():
        mine = {r["unit"]: r["value"] for r in got if r["point"] == point and r["run_id"] == run_id}
        assert mine == pytest.approx(_python_values(wh, run_id, measure, "chunk"))
