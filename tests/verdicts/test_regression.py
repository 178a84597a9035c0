"""`assay regress` and `assay history` (assay.verdicts.regression): reading --max-drop, the lasting drop, the
baseline picked, the skipped runs, every error message and the text of both commands, pinned whole.

The warehouse tests' runs (pipeline "synthetic" unless named; 8 questions, odd ones category=easy, even ones
category=hard; Success@1 = hits / 8). Each history and `best` test runs twice: on a Warehouse (values read with
SQL, assay.analytics.direct) and on a brief warehouse (no DuckDB connection held: values read as Ibis
expressions, assay.analytics.history).

    minute  run  status    hits  Success@1
    0       y    complete  4     0.5
    1       x    complete  8     1.0     the best: neither the first run nor the highest id
    2       f1   failed    8             reason "it broke"
    3       w    complete  6     0.75
    4       o    blocked   8             pipeline "other"
    5       v    complete  6     0.75
    6       b2   blocked   8             stepped over by `--baseline latest` from u
    7       t    complete  8     1.0     pipeline "other": comparable, but not the same pipeline
    8       u    complete  5     0.625   the candidate
"""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timedelta

import pyarrow as pa
import pytest
from synthetic import QuerySpec, Synthetic, write_synthetic

from assay.verdicts import regression
from assay.core.errors import ConfigError, RunFailed, RunNotFound
from assay.inputs.chunking import Chunk
from assay.verdicts.comparison import run_identity
from assay.store.warehouse import Warehouse
from assay.runs.sinks import store_run


def test_values_by_run_of_one_row_and_of_runs_with_one_value_each():
    """_values_by_run of one row, and of runs with one value each, by run id."""
    one = pa.table({"run_id": ["a"], "unit": ["q1"], "value": [0.5]})
    assert regression._values_by_run(one) == {"a": [0.5]}
    two = pa.table({"run_id": ["b", "a"], "unit": ["q1", "q1"], "value": [2.0, 1.0]})
    assert regression._values_by_run(two) == {"a": [1.0], "b": [2.0]}


# regress and history's pure parts: reading --max-drop, the lasting-drop search at its edges, per-run
# values in unit order, and the text both commands print


def test_parse_drop_reads_measure_level_and_allowance():
    """parse_drop reads --max-drop's measure, level (the measure's default if none) and allowance."""
    measure, level, drop = regression.parse_drop("Success@1=0.02")
    assert (measure.name, level, drop) == ("Success@1", "chunk", 0.02)
    measure, level, drop = regression.parse_drop(" nDCG@10:doc = 3 ")
    assert (measure.name, level, drop) == ("nDCG@10", "doc", 3.0)
    measure, level, _ = regression.parse_drop("Abstain=0.1")
    assert (measure.name, level) == ("Abstain", "query")


def test_parse_drop_says_what_is_wrong():
    """parse_drop's errors say what is wrong with the --max-drop given."""
    with pytest.raises(ConfigError) as error:
        regression.parse_drop("Success@1>0.02")
    assert str(error.value) == ("cannot read --max-drop 'Success@1>0.02'; write it like 'Success@1=0.02' or "
                                "'nDCG@10:doc=0.03'")
    with pytest.raises(ConfigError) as error:
        regression.parse_drop("Abstain:doc=0.1")
    assert str(error.value) == "--max-drop 'Abstain:doc=0.1': Abstain has level(s) query"


def series(*values):
    return [{"run_id": f"r{i}", "value": v} for i, v in enumerate(values)]


def test_lasting_drop_begins_where_no_later_run_comes_back():
    """A lasting drop begins at the first run after which no run comes back within the tolerance."""
    assert regression.lasting_drop(series(0.5, 0.625, 0.5, 0.5625), 0.03125) == {
        "run_id": "r2", "value": 0.5, "prior_best": 0.625, "prior_best_run": "r1"}


def test_lasting_drop_at_exactly_the_tolerance_is_no_drop():
    """A fall of exactly the tolerance is no drop."""
    assert regression.lasting_drop(series(0.5, 0.25), 0.25) is None
    assert regression.lasting_drop(series(0.5, 0.25), 0.125) == {
        "run_id": "r1", "value": 0.25, "prior_best": 0.5, "prior_best_run": "r0"}


def test_lasting_drop_names_the_first_run_holding_the_best_value():
    """A lasting drop names the first run holding the best value before it."""
    assert regression.lasting_drop(series(0.5, 0.5, 0.25), 0.0) == {
        "run_id": "r2", "value": 0.25, "prior_best": 0.5, "prior_best_run": "r0"}


def test_lasting_drop_counts_a_later_recovery_and_the_best_of_what_follows():
    """A later recovery ends a drop, and the best of what follows is the new reference."""
    assert regression.lasting_drop(series(0.5, 0.25, 0.5), 0.0) is None
    # r1 and r2 are followed by r2's 0.5, exactly 0.125 below the best before them; r3's 0.375 is not
    assert regression.lasting_drop(series(0.625, 0.25, 0.5, 0.375), 0.125) == {
        "run_id": "r3", "value": 0.375, "prior_best": 0.625, "prior_best_run": "r0"}
    assert regression.lasting_drop(series(0.625, 0.25, 0.5, 0.375), 0.25) is None
    assert regression.lasting_drop([], 0.02) is None
    assert regression.lasting_drop(series(0.5), 0.0) is None


def test_values_by_run_are_each_runs_values_in_unit_order():
    """_values_by_run gives each run's values in unit order."""
    table = pa.table({"run_id": ["b", "a", "b", "a", "c"], "unit": ["q2", "q9", "q1", "q10", "q1"],
                      "value": [2.0, 9.0, 1.0, 10.0, 5.0]})
    assert regression._values_by_run(table) == {"a": [10.0, 9.0], "b": [1.0, 2.0], "c": [5.0]}
    assert regression._values_by_run(table.slice(0, 0)) == {}


def check(metric, slice_, regressed, a, b, p):
    return {"metric": metric, "level": "chunk", "slice": slice_, "a": a, "b": b, "change": b - a, "max_drop": 0.02,
            "null": -0.02, "ci_low": -1.0, "ci_high": b - a + 0.05, "confidence": 0.95, "p_value": p / 2,
            "p_adjusted": p, "n": 8, "regressed": regressed}


RESULT = {"candidate": "cand", "baseline": "base", "baseline_rule": "latest", "alpha": 0.05, "mode": "significance",
          "correction": "holm", "family_size": 4,
          "checks": [check("nDCG@10", "form=gap", False, 0.5, 0.5, 1.0), check("Success@1", "all", False, 0.5, 0.25, 0.5),
                     check("RR@10", "form=gap", True, 0.75, 0.5, 0.01), check("nDCG@10", "all", True, 0.5, 0.375, 0.02)]}


def test_render_regress_lists_regressions_first_then_overall_then_slices():
    """regress's text lists regressions first, then the overall rows, then the slices."""
    text = regression.render_regress(RESULT)
    lines = text.splitlines()
    assert lines[0] == "regress: candidate cand against baseline base (--baseline latest)"
    assert lines[1].startswith("significance mode: ") and "Holm over 4 checks at alpha 0.05" in lines[1]
    rows = [line.split() for line in lines[4:-1]]
    assert [r[:3] for r in rows] == [["REGRESSED", "nDCG@10:chunk", "all"], ["REGRESSED", "RR@10:chunk", "form=gap"],
                                     ["ok", "Success@1:chunk", "all"], ["ok", "nDCG@10:chunk", "form=gap"]]
    # the change is negative (B - A), the floor is -allowance, the bound and both p-values are shown
    assert rows[0][3:] == ["0.500", "0.375", "-0.125", "-0.020", "<=", "-0.075", "(95%)", "0.0100", "0.0200", "8"]
    assert lines[-1] == "2 regression(s); exit code 7"
    calm = dict(RESULT, checks=RESULT["checks"][:2])
    assert regression.render_regress(calm).splitlines()[-1] == "0 regression(s): no significant regression"
    threshold = regression.render_regress(dict(calm, mode="threshold", correction="none"))
    assert threshold.splitlines()[-1] == "0 regression(s): no change below its floor"
    assert threshold.splitlines()[4].split()[3:] == ["0.500", "0.250", "-0.250", "-0.020", "[-1.000,", "-0.200]",
                                                      "0.2500", "8"]
    # the column heads say what each mode reports: the bound and the corrected p, or the interval for information
    assert lines[2].split() == ["status", "measure", "slice", "baseline", "candidate", "change", "floor", "bound", "p",
                                "p", "(Holm)", "n"]
    assert threshold.splitlines()[2].split() == ["status", "measure", "slice", "baseline", "candidate", "change",
                                                 "floor", "95%", "CI", "(info)", "p", "(info)", "n"]
    uncorrected = regression.render_regress(dict(calm, correction="none")).splitlines()
    only_slices = regression.render_regress(dict(RESULT, checks=[RESULT["checks"][0]]))  # no overall row
    assert only_slices.splitlines()[-1] == "0 regression(s): no significant regression"
    assert uncorrected[2].split()[-3:] == ["p", "(uncorrected)", "n"] and "test, no correction over 4 checks at" in uncorrected[1]


def history_point(run_id, value):
    return {"run_id": run_id, "started_at": "2026-11-30T10:00:00", "value": value, "ci_low": value - 0.125,
            "ci_high": value + 0.125, "n": 4}


def test_render_history_says_where_the_drop_began_and_notes_mixed_sets():
    """history's text says where a lasting drop began and notes runs over mixed judgment sets."""
    h = {"pipeline": "bm25", "metric": "Success@1", "level": "chunk", "slice": "all", "tolerance": 0.02,
         "comparable_groups": 2, "points": [history_point("r0", 0.5), history_point("r1", 0.25)],
         "lasting_drop": {"run_id": "r1", "value": 0.25, "prior_best": 0.5, "prior_best_run": "r0"}}
    lines = regression.render_history(h).splitlines()
    assert lines[0] == "history of Success@1 (chunk, slice all) for pipeline bm25"
    assert lines[1] == ("note: these runs span 2 different judgment/corpus sets; the drop search uses only the runs "
                        "comparable with the newest one")
    assert lines[4].split() == ["r0", "2026-11-30T10:00:00", "0.500", "[0.375,", "0.625]", "4", "#" * 20]
    assert lines[5].split() == ["r1", "2026-11-30T10:00:00", "0.250", "[0.125,", "0.375]", "4", "#" * 10]
    assert lines[-1] == ("a lasting drop began at run r1 (0.250; best before it 0.500 at r0): no later run came back "
                         "within 0.02")
    calm = dict(h, comparable_groups=1, lasting_drop=None)
    lines = regression.render_history(calm).splitlines()
    assert not lines[1].startswith("note") and lines[-1] == "no lasting drop (tolerance 0.02)"


# regress and history on a real warehouse, pinned whole (runs y, x, f1, w, o, v, b2, t, u: see the
# module docstring); each history and `best` test runs on a Warehouse (SQL) and on a brief one (Ibis)


S1 = regression.parse_drop("Success@1=0.1")


BLOCKED = "the model endpoint rate-limited every request"


HIT, MISS = Chunk("d0.md", 0, 0, 100, "x" * 100), Chunk("d1.md", 0, 0, 100, "x" * 100)


T0 = datetime(2026, 1, 1)


class _Held:
    """Takes the record write_synthetic builds, so its start, status and pipeline can be set."""

    def hold(self, record):
        self.record = record


def write(wh, run_id, hits, minutes, pipeline="synthetic", status="complete", stats=None):
    syn = Synthetic(["d0.md", "d1.md"], [HIT, MISS])
    for i, hit in enumerate(hits):
        syn.queries.append(QuerySpec(f"q{i:03d}", [("d0.md", None, None, 1)], [(HIT if hit else MISS).chunk_id],
                                     category="easy" if i % 2 else "hard"))
    held = _Held()
    write_synthetic(held, syn, run_id=run_id)
    started = T0 + timedelta(minutes=minutes)
    store_run(wh, dataclasses.replace(held.record, started_at=started, finished_at=started, status=status,
                                     config=dict(held.record.config, pipeline=pipeline),
                                     stats=held.record.stats if stats is None else stats))


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = tmp_path_factory.mktemp("regress2") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write(wh, "y", [1, 1, 0, 0, 0, 0, 1, 1], 0)
        write(wh, "x", [1] * 8, 1)
        write(wh, "f1", [1] * 8, 2, status="failed", stats={"outcome": {"status": "failed", "reason": "it broke"}})
        write(wh, "w", [1, 1, 1, 1, 0, 0, 1, 1], 3)
        write(wh, "o", [1] * 8, 4, pipeline="other", status="blocked")
        write(wh, "v", [1, 1, 1, 1, 0, 0, 1, 1], 5)
        write(wh, "b2", [1] * 8, 6, status="blocked")
        write(wh, "t", [1] * 8, 7, pipeline="other")
        write(wh, "u", [0, 1, 0, 1, 0, 1, 1, 1], 8)
    return path


@pytest.fixture(params=["sql", "ibis"])
def wh(request, path):
    if request.param == "ibis":
        yield Warehouse.brief(path)
        return
    with Warehouse.open(path, read_only=True) as opened:
        yield opened


def point(run_id, minute, value, n, low, high):
    return {"run_id": run_id, "started_at": f"2026-01-01T00:0{minute}:00", "kind": "run", "judgments_hash": "j" * 64,
            "corpus_hash": "c" * 64, "value": value, "n": n, "ci_low": low, "ci_high": high,
            # Success@1 has no context budget: the fill fields (assay.measures.fill) are null
            "budget_filled": None, "tokens_available": None, "shortfall": None, "questions_short": None}


# Wilson intervals (Success@1 is a proportion) of 4/8, 8/8, 6/8 and 5/8; of 2/4, 4/4 and 3/4 in the slice
ALL_POINTS = [point("y", 0, 0.5, 8, 0.17449863123834258, 0.8255013687616574),
              point("x", 1, 1.0, 8, 0.5977032976593509, 1.0),
              point("w", 3, 0.75, 8, 0.35575516038463106, 0.9554560862004845),
              point("v", 5, 0.75, 8, 0.35575516038463106, 0.9554560862004845),
              point("u", 8, 0.625, 8, 0.2589476856278575, 0.8975920027839138)]


INCOMPLETE = [{"run_id": "f1", "status": "failed", "reason": "it broke"},
              {"run_id": "b2", "status": "blocked", "reason": BLOCKED}]


def test_history_gives_every_point_the_drop_and_the_runs_that_did_not_complete(wh):
    """history gives every complete run's point, the lasting drop, and the runs that did not complete.

    Kills, in _history_points: each argument of ordered_runs, series and to_pyarrow dropped or None, the
    `if rows` / `expr is not None` conditions turned, `r["run_id"]` misspelt; in history: the default level
    (`levels[1]`), the incomplete runs' keys misspelt and their filter (`or`, `!=` pipeline, `==` complete,
    'COMPLETE')."""
    h = regression.history(wh, "synthetic", "Success@1", None)
    test = h.pop("drop_test")
    # the tolerance rule finds the fall from x (1.0) at w, but 8 questions cannot tell it from noise
    assert h == {"pipeline": "synthetic", "metric": "Success@1", "level": "chunk", "slice": "all",
                 "tolerance": 0.02, "points": ALL_POINTS, "comparable_groups": 1, "lasting_drop": None,
                 "alpha": 0.05, "baseline_window": 3, "included": [], "excluded": {}, "incomplete": INCOMPLETE}
    assert test["candidate"] == {"run_id": "w", "value": 0.75, "prior_best": 1.0, "prior_best_run": "x"}
    assert (test["baseline_runs"], test["drop_runs"], test["significant"]) == (["y", "x"], ["w", "v", "u"], False)


def test_history_reads_the_slice_asked_for(wh):
    """history reads the slice asked for.

    Kills: the slice dropped from pipeline_values or series (or passed as None): all 8 questions read."""
    h = regression.history(wh, "synthetic", "Success@1", "doc", slice_="category=easy")
    assert (h["level"], h["slice"]) == ("doc", "category=easy")
    assert h["points"] == [point("y", 0, 0.5, 4, 0.09189922917901211, 0.908100770820988),
                           point("x", 1, 1.0, 4, 0.3957730344827785, 1.0),
                           point("w", 3, 0.75, 4, 0.21942652006536278, 0.9868088381762734),
                           point("v", 5, 0.75, 4, 0.21942652006536278, 0.9868088381762734),
                           point("u", 8, 1.0, 4, 0.3957730344827785, 1.0)]
    assert h["lasting_drop"] is None


def test_history_of_a_query_level_measure_without_values_is_empty(wh):
    """history of a query-level measure without values is empty, at the measure's own level.

    Kills: the default level taken as 'chunk' for a measure without one (`or True`, `not in`), and
    `points[-1]` read from no points (`if points or True`)."""
    h = regression.history(wh, "synthetic", "Abstain", None)
    assert (h["level"], h["points"], h["comparable_groups"], h["lasting_drop"]) == ("query", [], 0, None)
    assert h["incomplete"] == INCOMPLETE


def test_history_says_what_is_wrong(wh, path):
    """history's errors: a tolerance outside [0, 1], an unknown pipeline.

    Kills: the --tolerance and unknown-pipeline messages replaced (None, or the problem of None)."""
    with pytest.raises(ConfigError) as error:
        regression.history(wh, "synthetic", "Success@1", None, tolerance=1.5)
    assert str(error.value) == "--tolerance must be a number at least 0 and at most 1, got 1.5"
    with pytest.raises(RunNotFound) as error:
        regression.history(wh, "nope", "Success@1", None)
    assert str(error.value) == f"no runs of pipeline 'nope' in {path}"


def test_the_best_baseline_is_the_best_complete_run_of_the_same_pipeline(wh):
    """--baseline best is the best complete run of the candidate's pipeline.

    Kills, in _means and pick_baseline's `best`: the pipeline, level or run ids not passed, each argument of
    series dropped or None, the values looked up under None or without a default, every mean NaN
    (`if values and False`): x (1.0) is neither the first of the history (what max keeps when every mean is
    NaN) nor the highest id; t, as good as x, is of another pipeline; f1 did not complete."""
    assert regression.pick_baseline(wh, run_identity(wh, "u"), "best", S1) == "x"
    assert regression.pick_baseline(wh, run_identity(wh, "v"), "best", S1) == "x"
    assert regression.pick_baseline(wh, run_identity(wh, "x"), "best", S1) == "w"


def test_the_latest_baseline_is_of_the_same_pipeline_and_says_when_there_is_none(wh):
    """--baseline latest is the newest complete run of the same pipeline; with none, latest and best say so.

    Kills: comparable runs read for pipeline None (t, of pipeline other, is newer than v); the messages of
    both `latest` and `best` with no run to use, misspelt or None."""
    assert regression.pick_baseline(wh, run_identity(wh, "u"), "latest", S1) == "v"
    with pytest.raises(RunNotFound) as error:
        regression.pick_baseline(wh, run_identity(wh, "y"), "latest", S1)
    assert str(error.value) == ("no comparable synthetic run before y to use as the baseline; record one first "
                                "or give --baseline RUN_ID")
    with pytest.raises(RunNotFound) as error:
        regression.pick_baseline(wh, run_identity(wh, "t"), "best", S1)
    assert str(error.value) == "no other comparable other run to use as the baseline"


@pytest.fixture
def sql_wh(path):
    with Warehouse.open(path, read_only=True) as opened:
        yield opened


def test_regress_latest_names_the_runs_it_stepped_over_and_a_named_baseline_none(sql_wh):
    """regress against latest names the runs it stepped over; against a named baseline, none.

    Kills: `skipped` built for no rule (`and False`) or every rule (`or True`, `!=`, 'LATEST'), its keys
    misspelt, incomplete_between given None for the candidate."""
    latest = regression.regress(sql_wh, "u", "latest", [S1])
    assert (latest["baseline"], latest["skipped"]) == ("v", [{"run_id": "b2", "status": "blocked", "reason": BLOCKED}])
    named = regression.regress(sql_wh, "u", "y", [S1])
    assert (named["baseline"], named["baseline_rule"], named["skipped"]) == ("y", "y", [])


def test_regress_says_what_is_wrong(sql_wh):
    """regress's errors: no --max-drop, a bad --alpha, a named baseline that failed.

    Kills: the messages for no --max-drop, a bad --alpha and a named baseline that failed, replaced."""
    with pytest.raises(ConfigError) as error:
        regression.regress(sql_wh, "u", "latest", [])
    assert str(error.value) == "give at least one --max-drop, e.g. --max-drop Success@1=0.02"
    with pytest.raises(ConfigError) as error:
        regression.regress(sql_wh, "u", "latest", [S1], alpha=1.5)
    assert str(error.value) == "--alpha must be a number greater than 0 and less than 1, got 1.5"
    with pytest.raises(RunFailed) as error:
        regression.regress(sql_wh, "u", "f1", [S1])
    assert str(error.value) == ("run f1 has status failed (it broke): using it as the baseline fails. It is stored "
                                "for inspection (`assay answers show f1`); to check an earlier complete run, name "
                                "it by its id")


def test_parse_drop_lists_every_level_of_the_measure():
    """A --max-drop at a level the measure lacks lists every level it has.

    Kills: the levels joined by anything but ', '."""
    with pytest.raises(ConfigError) as error:
        regression.parse_drop("Success@1:answer=0.1")
    assert str(error.value) == "--max-drop 'Success@1:answer=0.1': Success@1 has level(s) chunk, doc"


# the verdict in words first; MDC by hand: 1 won, 2 lost of 8, sd = sqrt(8/7 (3/8 - (1/8)**2)) = 0.6409, one-sided at
# Holm's first level 0.05/3: (t(1 - 0.05/3, 7) 2.6419 + t(0.8, 7) 0.8960) * 0.6409 / sqrt(8) = 0.802
REGRESS_TEXT = """\
No regression: no check is significantly below its floor (Holm over 3 checks at alpha 0.05); Success@1 (chunk) \
changed by -0.125 (from 0.750 to 0.625; one-sided 98.33% bound +0.366 against the floor -0.100, p = 0.453, 0.906 \
after the correction). With 8 questions, falls past the floor smaller than 0.802 cannot be told from noise (80% \
power at alpha 0.017, one-sided, the level this check was decided at).

regress: candidate u against baseline v (--baseline latest)
significance mode: a check fails when its change (candidate - baseline) is significantly below its floor (-allowance): \
one-sided paired test, Holm over 3 checks at alpha 0.05; each bound is the one-sided interval at the level that check was decided at, below the floor exactly when it fails
status  measure          slice              baseline  candidate  change   floor  bound                    p  p (Holm)  n
------------------------------------------------------------------------------------------------------------------------
ok      Success@1:chunk  all                   0.750      0.625  -0.125  -0.100  <= +0.366 (98.33%)  0.4531    0.9063  8
ok      Success@1:chunk  category=easy         0.750      1.000  +0.250  -0.100  <= +0.725 (98.33%)  0.8938    0.9063  4
ok      Success@1:chunk  category=hard         0.750      0.250  -0.500  -0.100  <= +0.296 (98.33%)  0.1139    0.3417  4
ok      Success@1:chunk  form=match            0.750      0.625  -0.125  -0.100  <= +0.366 (98.33%)  0.4531    0.9063  8
ok      Success@1:chunk  hard_class=normal     0.750      0.625  -0.125  -0.100  <= +0.366 (98.33%)  0.4531    0.9063  8
0 regression(s): no significant regression
"""


def test_render_regress_whole_text(sql_wh):
    """regress's text, whole.

    Kills: every column heading misspelt or upper-cased."""
    assert regression.render_regress(regression.regress(sql_wh, "u", "latest", [S1])) == REGRESS_TEXT


def test_render_regress_puts_the_overall_row_before_a_slice_that_sorts_before_it():
    """regress's text puts the overall row before a slice whose name sorts before 'all'.

    Kills: the overall slice compared with 'XXallXX' or 'ALL' in the row order ('a=1' sorts before 'all')."""
    def check(slice_):
        return {"metric": "Success@1", "level": "chunk", "slice": slice_, "a": 0.5, "b": 0.5, "change": 0.0,
                "max_drop": 0.02, "null": -0.02, "ci_low": -1.0, "ci_high": 0.0, "confidence": 0.975, "p_value": 1.0,
                "p_adjusted": 1.0, "n": 4, "regressed": False}
    result = {"candidate": "c", "baseline": "b", "baseline_rule": "latest", "alpha": 0.05, "mode": "significance",
              "correction": "holm", "family_size": 2, "checks": [check("a=1"), check("all")]}
    rows = regression.render_regress(result).splitlines()[4:6]
    assert [r.split()[2] for r in rows] == ["all", "a=1"]


HISTORY_TEXT = """\
history of Success@1 (chunk, slice all) for pipeline synthetic
run  started              value          95% CI  n
--------------------------------------------------------------------------------------------
y    2026-01-01T00:00:00  0.500  [0.174, 0.826]  8  ####################
x    2026-01-01T00:01:00  1.000  [0.598, 1.000]  8  ########################################
w    2026-01-01T00:03:00  0.750  [0.356, 0.955]  8  ##############################
v    2026-01-01T00:05:00  0.750  [0.356, 0.955]  8  ##############################
u    2026-01-01T00:08:00  0.625  [0.259, 0.898]  8  #########################
no lasting drop: from run w on no run came back within 0.02 of the best before it (1.000 at x), but the fall is not significant
test: the 3 run(s) from w on (0.708) against the baseline window of the 2 run(s) before it (0.750): change -0.042, p = 0.4342 >= alpha 0.05 (paired sign-flip permutation test over 8 questions, one-sided, 10000 resamples, seed 0)
"""


def test_render_history_whole_text(sql_wh):
    """history's text, whole, the bars included.

    Kills: every column heading misspelt or upper-cased (the last, empty one as 'XXXX'), and the bar at 41
    characters per unit (0.75 makes 30 at 40, 31 at 41)."""
    assert regression.render_history(regression.history(sql_wh, "synthetic", "Success@1", None)) == HISTORY_TEXT


def test_means_are_each_runs_mean_and_nan_for_a_run_without_values(wh):
    """_means gives each run's mean, NaN for a run without values; best still names a complete run.

    Kills, in _means: the mean as sum * len, and a run without values (no run here has an answer stage, so no
    Abstain values) made an error (`if values or True`: division by zero; float(None), float('XXnanXX'));
    `best` on such a measure still names a complete run of the pipeline."""
    assert regression._means(wh, ["y", "x", "w", "u"], S1[0], "chunk", "synthetic") == {
        "y": 0.5, "x": 1.0, "w": 0.75, "u": 0.625}
    abstain = regression._means(wh, ["y", "x"], regression.parse_drop("Abstain=0.1")[0], "query", "synthetic")
    assert list(abstain) == ["y", "x"] and all(math.isnan(v) for v in abstain.values())
    assert regression.pick_baseline(wh, run_identity(wh, "u"), "best", regression.parse_drop("Abstain=0.1")) in {
        "y", "x", "w", "v"}
