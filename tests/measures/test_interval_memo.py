"""The interval memo (assay.measures.memo): a run stores the intervals of its report; a report reads them and gets
the same rows, to the bit, as one that bootstraps again; a key changes with every input and with the method, so
nothing stale is ever read; and what the memo lacks is computed, as before."""

from __future__ import annotations

import math
import shutil

import pytest

from assay.measures import memo
from assay.measures.compute import evaluate
from assay.measures.stats import interval
from assay.store.warehouse import Warehouse
from conftest import MINI


@pytest.fixture
def mini(mini_bm25):
    path, rec = mini_bm25
    return path, rec.run_id, rec.config["seed"], rec.config.get("bootstrap_samples", 1000)


@pytest.fixture
def copy(mini, tmp_path):
    path, run_id, seed, samples = mini
    shutil.copy(path, tmp_path / "w.duckdb")
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        yield wh, run_id, seed, samples


def memo_rows(wh) -> dict:
    return {k: (lo, hi) for k, lo, hi in wh.con.execute("SELECT memo_key, ci_low, ci_high FROM interval_memo").fetchall()}


def test_a_run_stores_its_reports_intervals_and_a_report_reads_the_same_rows(copy):
    wh, run_id, seed, samples = copy
    stored = memo_rows(wh)
    read = evaluate(wh, run_id, seed=seed, samples=samples)
    # what the run stored is what the report shows, every bound of it
    assert stored and set(stored.values()) == {(r.ci_low, r.ci_high) for r in read}
    kinds = {r.metric for r in read}
    assert "nDCG@10" in kinds and "Success@3" in kinds  # bootstrap and Wilson intervals both
    wh.con.execute("DELETE FROM interval_memo")
    again = evaluate(wh, run_id, seed=seed, samples=samples)
    assert again == read  # every float the same, computed afresh
    assert memo_rows(wh) == {}  # a report does not write


def test_every_stored_bound_is_the_interval_of_its_inputs(copy):
    """Each group of values the report shows, its key, and the memo's bounds for it equal stats.interval's."""
    wh, run_id, seed, samples = copy
    stored = memo_rows(wh)
    from assay.measures.compute import question_labels, stored_values
    from assay.measures.registry import parse_measure

    labels, values = question_labels(wh, run_id), stored_values(wh, run_id)
    checked = 0
    for name in ("nDCG@10", "Success@3"):
        m = parse_measure(name)
        for level in m.levels:
            vals = [v for (q, lvl), v in sorted(values[name].items()) if lvl == level]
            key = memo.memo_key(vals, m.family.interval, seed, samples)
            assert stored[key] == interval(vals, m.family.interval, seed, samples)
            checked += 1
    assert checked == 4 and labels


def test_the_memo_is_what_a_report_reads(copy):
    """A bound changed by hand in the memo is what the report shows: the memo is read, not recomputed."""
    wh, run_id, seed, samples = copy
    wh.con.execute("UPDATE interval_memo SET ci_low = -0.5, ci_high = 1.5")
    rows = evaluate(wh, run_id, seed=seed, samples=samples)
    assert rows and all((r.ci_low, r.ci_high) == (-0.5, 1.5) for r in rows)


def test_other_inputs_or_another_method_miss_the_memo(copy, monkeypatch):
    wh, run_id, seed, samples = copy
    wh.con.execute("UPDATE interval_memo SET ci_low = -0.5, ci_high = 1.5")
    truth = {(r.metric, r.level, r.slice): r for r in evaluate(wh, run_id, seed=seed, samples=samples)}
    assert all(r.ci_low == -0.5 for r in truth.values())
    # another seed or sample count: computed, none of the poisoned bounds read
    other = evaluate(wh, run_id, seed=seed + 1, samples=samples)
    assert not any(r.ci_low == -0.5 for r in other)
    fewer = evaluate(wh, run_id, seed=seed, samples=samples // 2)
    assert not any(r.ci_low == -0.5 for r in fewer)
    # the method changed (stats.py or numpy or scipy): every stored bound is out of reach
    monkeypatch.setattr(memo, "method_id", lambda: "another method")
    fresh = evaluate(wh, run_id, seed=seed, samples=samples)
    assert not any(r.ci_low == -0.5 for r in fresh)
    for r in fresh:
        assert (r.value, r.n) == (truth[(r.metric, r.level, r.slice)].value, truth[(r.metric, r.level, r.slice)].n)


def test_remember_stores_only_the_new_bounds_and_keeps_the_old(copy):
    wh, run_id, seed, samples = copy
    before = memo_rows(wh)
    with wh.transaction():
        rows = evaluate(wh, run_id, seed=seed + 7, samples=samples, remember=True)
    after = memo_rows(wh)
    assert set(before) < set(after) and all(after[k] == v for k, v in before.items())
    with wh.transaction():  # everything known now: nothing new, no key written twice
        assert evaluate(wh, run_id, seed=seed + 7, samples=samples, remember=True) == rows
        assert memo.remember(wh, {k: (0.0, 1.0) for k in after}) == 0
    assert memo_rows(wh) == after


def test_a_key_changes_with_every_input():
    base = memo.memo_key([0.25, 0.5, 1.0], "bootstrap", 0, 1000)
    assert base == memo.memo_key((0.25, 0.5, 1), "bootstrap", 0, 1000)  # the same floats, however given
    variants = [
        memo.memo_key([0.5, 0.25, 1.0], "bootstrap", 0, 1000),  # order (the resamples are by position)
        memo.memo_key([0.25, 0.5, 1.0, 0.0], "bootstrap", 0, 1000),
        memo.memo_key([0.25, 0.5, 0.9999999999999999], "bootstrap", 0, 1000),  # the last bit
        memo.memo_key([0.25, 0.5, 1.0], "wilson", 0, 1000),
        memo.memo_key([0.25, 0.5, 1.0], "bootstrap", 1, 1000),
        memo.memo_key([0.25, 0.5, 1.0], "bootstrap", 0, 999),
    ]
    assert len({base, *variants}) == 7


def test_the_method_is_the_stats_code_and_the_numeric_libraries(monkeypatch, tmp_path):
    import numpy
    import scipy

    from assay.measures import stats

    real = memo.method_id()
    assert real == memo.method_id() and len(real) == 64
    fake = tmp_path / "stats.py"
    fake.write_bytes(open(stats.__file__, "rb").read() + b"\n# changed\n")
    monkeypatch.setattr(stats, "__file__", str(fake))
    memo.method_id.cache_clear()
    try:
        assert memo.method_id() != real
    finally:
        monkeypatch.undo()
        memo.method_id.cache_clear()
    assert memo.method_id() == real
    # the versions come from the packages' version files, read without importing anything
    assert numpy.__version__ in open(f"{numpy.__path__[0]}/version.py").read()
    assert scipy.__version__ in open(f"{scipy.__path__[0]}/version.py").read()


def test_a_warehouse_without_the_table_recalls_nothing(tmp_path):
    import duckdb

    class Bare:
        con = duckdb.connect(str(tmp_path / "bare.duckdb"))

    assert memo.recall(Bare, ["a" * 64]) == {}
    assert memo.recall(Bare, []) == {}


def test_remember_asks_the_memo_once(copy, monkeypatch):
    """One look-up for all the bounds given, not one a bound (the run writes ~200 of them in its transaction)."""
    wh, run_id, seed, samples = copy
    calls = []
    real = memo.recall
    monkeypatch.setattr(memo, "recall", lambda w, keys: calls.append(1) or real(w, keys))
    bounds = {f"{i:064x}": (0.1, 0.9) for i in range(50)}
    with wh.transaction():
        assert memo.remember(wh, bounds) == 50
    assert len(calls) == 1 and set(bounds) <= set(memo_rows(wh))


def test_a_rescore_stores_its_own_reports_intervals(copy, tmp_path):
    """A derived run's intervals are remembered too, seeded as its row says: a rescore over half the questions
    has other values, so other keys, and its report reads every bound from the memo."""
    import json

    from assay.runs.rescore import rescore

    wh, run_id, seed, samples = copy
    lines = (MINI / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    before = memo_rows(wh)
    derived = rescore(wh, run_id, half)["run_id"]
    after = memo_rows(wh)
    assert set(before) < set(after)
    rows = evaluate(wh, derived, seed=seed, samples=samples)
    # a slice of two questions once got a NaN bound from the bootstrap, compared here as text since NaN equals
    # nothing; since issue 25 every bound is finite and compared as a float
    assert all(math.isfinite(b) for r in rows for b in (r.ci_low, r.ci_high))
    assert {(r.ci_low, r.ci_high) for r in rows} <= set(after.values())
    assert json.loads(wh.con.execute("SELECT config FROM runs WHERE run_id = ?", [derived]).fetchall()[0][0])[
        "rescore_of"] == run_id
