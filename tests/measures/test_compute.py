"""assay.measures.compute (evaluate, stored_values) and the `assay measures compute` it serves
(assay.measures.values.compute, complete_runs) on real warehouses, pinned whole: every row of evaluate (value,
n and interval of every measure, level and slice, at the default and at a given seed and sample count), stored
values read instead of computed again, the answer measures asked about once and only on a run with answers,
stages other than final, and `assay measures compute` on runs named, every complete run and another stage.

The warehouses are written through assay's own API: the mini corpus run with an extractive answer stage
(answers, citations and claims: units 'query_id|claim|cite'), and synthetic runs (tests/synthetic.py) with a
retrieve and a final stage that differ.
"""

from __future__ import annotations

import dataclasses
import shutil
from datetime import datetime, timedelta

import pytest
from conftest import MINI
from synthetic import QuerySpec, Synthetic, write_synthetic

from assay.inputs.chunking import Chunk
from assay.measures import compute as cm, values as mv
from assay.measures.registry import DEFAULT_MEASURES, load_user_measures, parse_measure
from assay.measures.stats import interval
from assay.inputs.project import load_config
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from assay.runs.sinks import store_run


T0 = datetime(2026, 1, 1)


HIT, MISS = Chunk("d0.md", 0, 0, 100, "x" * 100), Chunk("d1.md", 0, 0, 100, "x" * 100)


ANSWER = [m for m in DEFAULT_MEASURES if m.family.levels == ("answer",)]


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """The mini corpus, BM25 with an extractive answer stage: a run with answers (its id returned)."""
    path = tmp_path_factory.mktemp("compute-values") / "mini.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl",
                  RunOptions("bm25", chunk_size=120, generator="extractive"))
    return path, rec.run_id


@pytest.fixture
def mini_copy(mini, tmp_path):
    path, run_id = mini
    shutil.copy(path, tmp_path / "w.duckdb")
    return tmp_path / "w.duckdb", run_id


class _Held:
    def hold(self, record):
        self.record = record


def write_staged(wh, run_id: str, minutes: int, status: str = "complete"):
    """A run of 4 questions (q000..q003; q000 and q002 category=even, the others odd) with two stages: at
    ``retrieve`` q000 and q001 find the relevant chunk at rank 1, at ``final`` q000, q002 and q003 do."""
    syn = Synthetic(["d0.md", "d1.md"], [HIT, MISS])
    retrieve, final = [1, 1, 0, 0], [1, 0, 1, 1]
    stages = {}
    for i in range(4):
        qid = f"q{i:03d}"
        syn.queries.append(QuerySpec(qid, [("d0.md", None, None, 1)], [], category="odd" if i % 2 else "even"))
        stages[qid] = {"retrieve": [(HIT if retrieve[i] else MISS).chunk_id],
                       "final": [(HIT if final[i] else MISS).chunk_id, (MISS if final[i] else HIT).chunk_id]}
    held = _Held()
    write_synthetic(held, syn, run_id=run_id, stages=stages)
    started = T0 + timedelta(minutes=minutes)
    record = dataclasses.replace(held.record, started_at=started, finished_at=started, status=status)
    store_run(wh, record)
    return record


@pytest.fixture
def staged(tmp_path):
    """Runs b (minute 0), c (minute 1), a (minute 2), failed f (minute 3): complete runs oldest first b, c, a."""
    path = tmp_path / "staged.duckdb"
    with Warehouse.open(path) as wh:
        write_staged(wh, "b", 0)
        write_staged(wh, "c", 1)
        write_staged(wh, "a", 2)
        write_staged(wh, "f", 3, status="failed")
    return path


def reference(wh, run_id, measures, stage="final", seed=0, samples=1000, values_of=None):
    labels = {q: {"category": c, "form": f, "hard_class": h} for q, c, f, h in wh.con.execute(
        "SELECT query_id, category, form, hard_class FROM eval_questions WHERE run_id = ?", [run_id]).fetchall()}
    rows = []
    for measure in measures:
        values = values_of(measure) if values_of else cm.per_query(wh, run_id, measure, stage)
        for level in measure.levels:
            units = sorted(u for u, lvl in values if lvl == level)
            if not units:
                continue
            slices = {"all": units}
            for field in ("category", "form", "hard_class"):
                for u in units:
                    slices.setdefault(f"{field}={labels[u.split('|')[0]][field]}", []).append(u)
            for name in ["all"] + sorted(set(slices) - {"all"}):
                vals = [values[(u, level)] for u in slices[name]]
                low, high = interval(vals, measure.family.interval, seed, samples)
                rows.append((measure.name, level, name, sum(vals) / len(vals), len(vals), low, high))
    return rows


def as_tuples(rows):
    return [(r.metric, r.level, r.slice, r.value, r.n, r.ci_low, r.ci_high) for r in rows]


class _Con:
    def __init__(self, con, log):
        self._con, self._log = con, log

    def execute(self, sql, *args):
        self._log.append(sql)
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


class _Recording:
    """A warehouse whose SQL (con.execute and query) is logged: ``asked`` the statements, ``measures`` the
    measure files run."""

    def __init__(self, wh):
        self._wh, self.asked, self.measures = wh, [], []
        self.con = _Con(wh.con, self.asked)

    def query(self, sql, **params):
        self.measures.append(sql)
        return self._wh.query(sql, **params)

    def __getattr__(self, name):
        return getattr(self._wh, name)


def _answer_lookups(rec):
    """The statements that read the answers table (the answer measures' own SQL goes through ``query``)."""
    return [sql for sql in rec.asked if "from answers" in " ".join(sql.lower().split())]


def test_evaluate_every_row_at_the_default_and_a_given_seed_and_sample_count(mini_copy):
    """Every row of evaluate over the default measures on a run with answers whose answer measures are not stored
    (so they are computed): value, n and interval of every measure, level and slice equal the reference (each
    slice's own interval call), at seed 0 / 1000 samples by default and at seed 7 / 200 samples given; a slice
    holding every question repeats the "all" row. Kills assay.measures.compute.x_evaluate__mutmut_3 (seed 1),
    _4 (1001 samples), _111 (intervals' default sample count), _94 (``or``: one interval kind's groups given the
    other's), _86 (``!=``: a slice unlike "all" given its interval), _67 and _68 (the question of a
    'query_id|claim|cite' unit), _17, _26, _27, _30, _33, _35 (answer measures not computed on a run with
    answers), _37.._39, _41.._43 (per_query given the wrong arguments), x_has_answers__mutmut_1."""
    path, run_id = mini_copy
    with Warehouse.open(path) as wh:
        wh.con.execute("DELETE FROM measure_values WHERE level = 'answer'")
        expected = reference(wh, run_id, DEFAULT_MEASURES)
        got = as_tuples(cm.evaluate(wh, run_id))
        assert got == expected
        assert as_tuples(cm.evaluate(wh, run_id, seed=7, samples=200)) == reference(
            wh, run_id, DEFAULT_MEASURES, seed=7, samples=200)
    assert len(got) == 208  # SpanPrecision@10 and SpanIoU@10 in place of SpanPrecision@1000tok: 8 rows more
    by_key = {r[:3]: r[3:] for r in got}
    # pinned literally as well: a citation measure (units 'query_id|claim|cite') and a bootstrap one
    assert by_key[("citation_precision", "answer", "all")][:2] == (6 / 14, 14)
    assert by_key[("citation_precision", "answer", "form=gap")][:2] == (1 / 3, 3)
    assert by_key[("answer_rate", "answer", "all")][:2] == (1.0, 5)
    # a slice holding every question gives the "all" row again, interval included
    assert by_key[("Abstain", "query", "all")] == by_key[("Abstain", "query", "category=no_answer")]


def test_evaluate_reads_stored_values_instead_of_computing_them_again(mini_copy):
    """Values stored in measure_values are the ones evaluate reports: with a ranking and an answer measure's
    stored values changed, the rows show the stored ones (the SQL would give the old). Kills
    assay.measures.compute.x_evaluate__mutmut_12, _13, _15 (stored values of no run / stage), _19, _20 (stored
    values not looked up), _22 (a stored answer measure computed again), x_stored_values__mutmut_12 (stored
    under no measure name)."""
    path, run_id = mini_copy
    measures = [parse_measure("Success@1"), parse_measure("answer_rate")]
    with Warehouse.open(path) as wh:
        wh.con.execute("UPDATE measure_values SET value = 1 - value WHERE measure IN ('Success@1', 'answer_rate') "
                       "AND unit IN ('restore', 'cache-size')")
        stored = cm.stored_values(wh, run_id)
        expected = reference(wh, run_id, measures, values_of=lambda m: stored[m.name])
        got = as_tuples(cm.evaluate(wh, run_id, measures))
        computed = reference(wh, run_id, measures)
    assert got == expected
    assert got != computed
    by_key = {r[:3]: r[3:5] for r in got}
    assert by_key[("answer_rate", "answer", "all")] == (3 / 5, 5)
    assert by_key[("Success@1", "chunk", "all")] != {r[:3]: r[3:5] for r in computed}[("Success@1", "chunk", "all")]


def test_evaluate_asks_once_whether_the_run_has_answers_and_runs_no_answer_sql_without_them(staged):
    """On a run without answers the answer measures (not stored: no values) are no rows, found with one
    lookup of answers and none of their SQL; every other measure is read from measure_values (no measure SQL
    run but Abstain's, which has no stored values: no question is unanswerable). Kills assay.measures.compute.x_evaluate__mutmut_24, _25 (answer measures taken for others:
    their SQL run), _26 (never asked), _28 (asked once per answer measure), _36 (their SQL run anyway)."""
    with Warehouse.open(staged) as wh:
        rec = _Recording(wh)
        rows = cm.evaluate(rec, "a")
        assert rec.measures == ["measures/abstention"]  # Abstain: no unanswerable question, so nothing stored
        assert len(_answer_lookups(rec)) == 1
        assert as_tuples(rows) == reference(wh, "a", DEFAULT_MEASURES)
    assert {r.metric for r in rows} == {m.name for m in DEFAULT_MEASURES} - {m.name for m in ANSWER} - {"Abstain"}
    with Warehouse.open(staged, read_only=True) as wh:
        assert cm.has_answers(wh, "a") is False


def test_evaluate_asks_about_answers_once_on_a_run_with_them(mini_copy):
    """With answers and no stored answer values, one lookup of answers serves every answer measure, and each
    answer measure's SQL runs once. Kills assay.measures.compute.x_evaluate__mutmut_28 (asked per measure)."""
    path, run_id = mini_copy
    with Warehouse.open(path) as wh:
        wh.con.execute("DELETE FROM measure_values WHERE level = 'answer'")
        rec = _Recording(wh)
        cm.evaluate(rec, run_id)
        assert len(_answer_lookups(rec)) == 1
        assert rec.measures == [m.sql for m in ANSWER]


STAGE_MEASURE = """\
-- measure: StageEcho
-- interval: wilson
-- cutoff: none
-- levels: answer
-- definition: 1 for each answered question when scored at the retrieve stage, else 0 (a test measure)
SELECT a.query_id AS unit, 'answer' AS level, CASE WHEN $stage = 'retrieve' THEN 1.0 ELSE 0.0 END AS value
FROM answers a WHERE a.run_id = $run_id
"""


@pytest.fixture
def stage_measure(tmp_path):
    (tmp_path / "my_measures").mkdir()
    (tmp_path / "my_measures" / "stage_echo.sql").write_text(STAGE_MEASURE, encoding="utf-8")
    (tmp_path / "assay.toml").write_text('[measures]\ndir = "my_measures"\n', encoding="utf-8")
    load_user_measures(load_config(tmp_path / "assay.toml"))
    try:
        yield parse_measure("StageEcho")
    finally:
        load_user_measures({})


def test_evaluate_at_another_stage(staged, mini_copy, stage_measure):
    """At stage retrieve (nothing stored for it), every ranking measure is computed at that stage, and an answer
    measure reading $stage gets it: the rows equal the reference at retrieve, not the final stage's. Kills
    assay.measures.compute.x_evaluate__mutmut_16 (the final stage's stored values read), _50 (no stage),
    _54 (the final stage), _40 and _44 (an answer measure given no stage / the final one)."""
    ranking = [m for m in DEFAULT_MEASURES if set(m.levels) <= {"chunk", "doc"}]
    with Warehouse.open(staged) as wh:
        got = as_tuples(cm.evaluate(wh, "a", ranking, stage="retrieve"))
        assert got == reference(wh, "a", ranking, stage="retrieve")
    by_key = {r[:3]: r[3:5] for r in got}
    assert by_key[("Success@1", "chunk", "all")] == (0.5, 4)
    assert by_key[("Success@1", "doc", "category=odd")] == (0.5, 2)
    assert by_key[("Success@3", "chunk", "category=even")] == (0.5, 2)
    path, run_id = mini_copy
    with Warehouse.open(path) as wh:
        echo = as_tuples(cm.evaluate(wh, run_id, [stage_measure], stage="retrieve"))
        assert echo == reference(wh, run_id, [stage_measure], stage="retrieve")
        assert as_tuples(cm.evaluate(wh, run_id, [stage_measure]))[0][3] == 0.0
    assert echo[0][:5] == ("StageEcho", "answer", "all", 1.0, 6)


def test_stored_values_of_a_run_at_the_default_stage(staged):
    """compute.stored_values gives {measure: {(unit, level): value}} of the final stage by default. Kills
    assay.measures.compute.x_stored_values__mutmut_1, _2 (another default stage), _12 (no measure name)."""
    with Warehouse.open(staged, read_only=True) as wh:
        stored = cm.stored_values(wh, "a")
        assert stored == cm.stored_values(wh, "a", "final")
    assert stored["Success@1"] == {("q000", "chunk"): 1.0, ("q000", "doc"): 1.0, ("q001", "chunk"): 0.0,
                                   ("q001", "doc"): 0.0, ("q002", "chunk"): 1.0, ("q002", "doc"): 1.0,
                                   ("q003", "chunk"): 1.0, ("q003", "doc"): 1.0}
    assert sorted(stored) == sorted(m.name for m in DEFAULT_MEASURES if m not in ANSWER and m.name != "Abstain")


def _counts(stored):
    return stored.run_id, stored.written, stored.skipped, stored.kept


def test_complete_runs_oldest_first(staged):
    """Every complete run, oldest first (not by id; the failed run left out). Kills
    assay.measures.values.x_complete_runs__mutmut_1, _2 (the query broken)."""
    with Warehouse.open(staged, read_only=True) as wh:
        assert mv.complete_runs(wh) == ["b", "c", "a"]


def test_compute_the_runs_named_at_the_default_stage(staged):
    """`assay measures compute` on a run named (not the latest, not every run), its values deleted first: each
    default measure's values are written at the final stage and the Stored result comes back and goes to
    on_run. Kills assay.measures.values.x_compute__mutmut_1 (every run), _2, _3 (another default stage), _9
    (the latest run instead), _20 (None returned)."""
    with Warehouse.open(staged) as wh:
        wh.con.execute("DELETE FROM measure_values WHERE run_id = 'c'")
        seen = []
        done = mv.compute(wh, ["c", "c"], on_run=seen.append)
        after = mv.compute(wh, ["c"])
        n = wh.con.execute("SELECT COUNT(*) FROM measure_values WHERE run_id = 'c' AND stage = 'final'").fetchall()
    written = {m.name: (8 if m.levels == ("chunk", "doc") else 4) for m in DEFAULT_MEASURES if m not in ANSWER}
    written.update({"Abstain": 0, **{m.name: 0 for m in ANSWER}})
    assert [_counts(s) for s in done] == [("c", written, {}, 0)]
    assert seen == done
    assert n == [(sum(written.values()),)]
    assert [_counts(s) for s in after] == [("c", dict.fromkeys(written, 0), {}, sum(written.values()))]


def test_compute_every_complete_run_and_another_stage(staged):
    """--all-runs visits every complete run oldest first; at stage retrieve the ranking measures are written
    for it and the question and answer measures skipped with the reason. Kills
    assay.measures.values.x_compute__mutmut_4, _5 (no runs / no warehouse), _19 (the final stage instead)."""
    with Warehouse.open(staged) as wh:
        every = mv.compute(wh, all_runs=True)
        retrieve = mv.compute(wh, ["b"], stage="retrieve")
        stored = cm.stored_values(wh, "b", "retrieve")
    assert [s.run_id for s in every] == ["b", "c", "a"]
    assert all(s.total == 0 and s.skipped == {} for s in every)
    ranking = [m for m in DEFAULT_MEASURES if set(m.levels) <= {"chunk", "doc"}]
    question = [m for m in DEFAULT_MEASURES if m not in ranking]
    ((run_id, written, skipped, kept),) = [_counts(s) for s in retrieve]
    assert (run_id, kept) == ("b", 0)
    assert written == {m.name: 8 if m.levels == ("chunk", "doc") else 4 for m in ranking}
    assert skipped == {m.name: "scores the final answer, not the retrieve stage" for m in question}
    assert stored["Success@1"] == {("q000", "chunk"): 1.0, ("q000", "doc"): 1.0, ("q001", "chunk"): 1.0,
                                   ("q001", "doc"): 1.0, ("q002", "chunk"): 0.0, ("q002", "doc"): 0.0,
                                   ("q003", "chunk"): 0.0, ("q003", "doc"): 0.0}


def test_evaluate_bootstraps_a_slice_holding_every_question_once(mini, monkeypatch):
    """The intervals of one kind are asked for in one call each, at the seed and sample count given, and a slice
    holding every question is not computed again (its row repeats the "all" row): on the mini run, of 208 rows 6
    repeat their "all" row, and the wilson call holds 90 groups of values and the bootstrap call 112, each at seed
    3 and 300 samples. Kills
    assay.measures.compute.x_evaluate__mutmut_70, _79, _80 (such a slice computed again: the same figures, more
    work), _111 (intervals' default sample count), _94 (groups of the other kind asked for too)."""
    path, run_id = mini
    calls = []
    real = cm.intervals

    def recording(groups, kind, seeds, samples=1000):
        calls.append((kind, len(groups), set(seeds), samples))
        return real(groups, kind, seeds, samples)

    monkeypatch.setattr(cm, "intervals", recording)
    with Warehouse.open(path, read_only=True) as wh:
        rows = cm.evaluate(wh, run_id, seed=3, samples=300)
    assert sorted(calls) == [("bootstrap", 112, {3}, 300), ("wilson", 90, {3}, 300)]
    assert len(rows) == 208
    alls = {(r.metric, r.level): r for r in rows if r.slice == "all"}
    repeats = [r for r in rows if r.slice != "all" and r.n == alls[(r.metric, r.level)].n]
    assert [(r.metric, r.slice) for r in repeats] == [
        (metric, name) for metric in ("Abstain", "refusal_rate")
        for name in ("category=no_answer", "form=gap", "hard_class=normal")]  # tulips, the one no_answer question
    assert all((r.value, r.n, r.ci_low, r.ci_high) == (alls[(r.metric, r.level)].value, alls[(r.metric, r.level)].n,
               alls[(r.metric, r.level)].ci_low, alls[(r.metric, r.level)].ci_high) for r in repeats)
