"""The SQL the regression baseline and the history read (sql/reports/comparable_runs.sql,
sql/analytics/{pipeline_runs,pipeline_values,pipeline_slice_values,stored_runs}.sql), row for row, over runs
chosen to sit on every rule: two pipelines, other judgments, another corpus, a failed run, two runs started
at the same moment (the run id decides), run ids whose order is not the order they started in, and stored
values at another stage, level and measure."""

from datetime import datetime

import pytest

from synthetic import QuerySpec, Synthetic, write_synthetic
from world import opened

# run id -> (started, pipeline, judgments, corpus, status, seed): the ids sort against the start times
RUNS = {
    "r-e": (datetime(2026, 1, 1), "p", "j", "c", "complete", 1),
    "r-d": (datetime(2026, 1, 2), "p", "j", "c", "complete", 2),
    "r-c": (datetime(2026, 1, 2), "p", "j", "c", "complete", 3),   # started with r-d: r-c comes first
    "r-b": (datetime(2026, 1, 3), "q", "j", "c", "complete", 4),   # another pipeline
    "r-a": (datetime(2026, 1, 4), "p", "k", "c", "complete", 5),   # other judgments
    "r-f": (datetime(2026, 1, 5), "p", "j", "d", "complete", 6),   # another corpus
    "r-g": (datetime(2026, 1, 6), "p", "j", "c", "failed", 7),     # never complete: never seen
}
LABELS = {"q1": ("normal", "match", "easy"), "q2": ("ambiguous", "gap", "hard"), "q3": ("normal", "gap", "easy")}
UNITS = ("q3", "q1", "q2")  # stored out of order: values come back in unit order


def _value(run, stage, level, measure, unit):
    """A distinct value for every stored row, so a row taken from the wrong place shows."""
    base = {"r-e": 0.1, "r-d": 0.2, "r-c": 0.3, "r-b": 0.4, "r-a": 0.5, "r-f": 0.6, "r-g": 0.7}[run]
    return round(base + {"final": 0, "rerank": 0.01}[stage] + {"chunk": 0, "doc": 0.002}[level]
                 + {"nDCG@10": 0, "AP": 0.004}[measure] + int(unit[1]) * 0.0001, 6)


def _write(wh):
    syn = Synthetic(["a.md"], [], [QuerySpec(q, [("a.md", 0, 10, 1)], []) for q in LABELS])
    write_synthetic(wh, syn, run_id="template")
    for q, (category, form, hard) in LABELS.items():
        wh.con.execute("UPDATE queries SET category = ?, form = ?, hard_class = ? WHERE query_id = ?",
                       [category, form, hard, q])
    for run, (started, pipeline, judgments, corpus, status, seed) in RUNS.items():
        wh.con.execute("INSERT INTO runs SELECT * REPLACE (? AS run_id, ? AS started_at, ? AS pipeline, "
                       "? AS judgments_hash, ? AS corpus_hash, ? AS status, ? AS seed, ? AS config) "
                       "FROM runs WHERE run_id = 'template'",
                       [run, started, pipeline, judgments * 64, corpus * 64, status, seed, f'{{"run": "{run}"}}'])
        wh.con.execute("INSERT INTO run_queries SELECT ? AS run_id, query_id, latency_ms, n_results FROM run_queries "
                       "WHERE run_id = 'template'", [run])
        for stage in ("final", "rerank"):
            for level in ("chunk", "doc"):
                for measure in ("nDCG@10", "AP"):
                    if (run, stage, measure) == ("r-e", "rerank", "AP"):
                        continue  # r-e holds no AP at the rerank stage
                    for unit in UNITS:
                        wh.con.execute("INSERT INTO measure_values VALUES (?, ?, ?, ?, ?, 'x', NULL, NULL, ?, ?)",
                                       [run, stage, level, unit, measure, unit, _value(run, stage, level, measure,
                                                                                       unit)])
    # the same questions under the other judgments, with other labels
    wh.con.execute("INSERT INTO queries SELECT * REPLACE (? AS judgments_hash, 'adversarial' AS category, "
                   "'other' AS form, 'other' AS hard_class) FROM queries WHERE judgments_hash = ?",
                   ["k" * 64, "j" * 64])
    wh.con.execute("DELETE FROM measure_values WHERE run_id = 'template'")
    wh.con.execute("DELETE FROM runs WHERE run_id = 'template'")


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    wh = opened(tmp_path_factory, "history", _write)
    yield wh
    wh.close()


def _comparable(wh, run_id, pipeline):
    _, rows = wh.query("reports/comparable_runs", run_id=run_id, pipeline=pipeline)
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def _row(run):
    started, pipeline = RUNS[run][:2]
    return (run, started, pipeline, f'{{"run": "{run}"}}')


def test_comparable_runs_are_those_of_the_same_judgments_and_corpus_oldest_first(wh):
    assert _comparable(wh, "r-d", "p") == [_row(r) for r in ("r-e", "r-c", "r-d")]
    assert _comparable(wh, "r-d", None) == [_row(r) for r in ("r-e", "r-c", "r-d", "r-b")]
    assert _comparable(wh, "r-b", "q") == [_row("r-b")]
    assert _comparable(wh, "r-a", "p") == [_row("r-a")]
    assert _comparable(wh, "r-f", None) == [_row("r-f")]
    assert _comparable(wh, "r-g", None) == []  # a failed run is comparable with nothing


def test_pipeline_runs_are_its_complete_runs(wh):
    _, rows = wh.query("analytics/pipeline_runs", pipeline="p")
    # kind, sweep_id and ablation_id: what history needs to leave out sweeps, ablations and derived runs
    want = [(r, RUNS[r][0], RUNS[r][2] * 64, RUNS[r][3] * 64, RUNS[r][5], "retrieval", None, None)
            for r in ("r-e", "r-d", "r-c", "r-a", "r-f")]
    assert sorted(rows) == sorted(want)
    _, rows = wh.query("analytics/pipeline_runs", pipeline="q")
    assert [r[0] for r in rows] == ["r-b"]


def _values(run, stage, level, measure, units=("q1", "q2", "q3")):
    return [_value(run, stage, level, measure, u) for u in units]


@pytest.mark.parametrize("stage, level, measure", [("final", "chunk", "nDCG@10"), ("rerank", "doc", "AP")])
def test_pipeline_values_are_each_runs_values_in_unit_order(wh, stage, level, measure):
    _, rows = wh.query("analytics/pipeline_values", pipeline="p", measure=measure, stage=stage, level=level)
    runs = ("r-d", "r-c", "r-a", "r-f") + (("r-e",) if stage == "final" else ())
    want = {r: _values(r, stage, level, measure) for r in runs}
    assert {r: [round(v, 6) for v in vals] for r, vals in rows} == want


@pytest.mark.parametrize("field, label, units", [
    ("category", "normal", ("q1", "q3")), ("category", "ambiguous", ("q2",)), ("form", "gap", ("q2", "q3")),
    ("hard_class", "easy", ("q1", "q3")), ("hard_class", "hard", ("q2",)), ("category", "None", ()),
    ("nothing", "None", ("q1", "q2", "q3")),  # no such field: every question's label is 'None'
])
def test_pipeline_slice_values_take_the_questions_of_the_slice(wh, field, label, units):
    _, rows = wh.query("analytics/pipeline_slice_values", pipeline="p", measure="AP", stage="final", level="doc",
                       field=field, label=label)
    # r-a's questions are labelled by its own judgments (all adversarial/other): in no slice above but 'None'
    runs = ("r-e", "r-d", "r-c", "r-f") + (("r-a",) if field == "nothing" else ())
    want = {r: _values(r, "final", "doc", "AP", units) for r in runs} if units else {}
    assert {r: [round(v, 6) for v in vals] for r, vals in rows} == want


def test_stored_runs_hold_the_measure_at_the_stage(wh):
    _, rows = wh.query("analytics/stored_runs", pipeline="p", measure="AP", stage="rerank")
    assert sorted(r[0] for r in rows) == ["r-a", "r-c", "r-d", "r-f"]
    _, rows = wh.query("analytics/stored_runs", pipeline="p", measure="AP", stage="final")
    assert sorted(r[0] for r in rows) == ["r-a", "r-c", "r-d", "r-e", "r-f"]
    _, rows = wh.query("analytics/stored_runs", pipeline="q", measure="nDCG@10", stage="rerank")
    assert [r[0] for r in rows] == ["r-b"]
