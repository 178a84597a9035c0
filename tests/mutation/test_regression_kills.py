"""regress and history's pure parts pinned exactly, where mutmut's survivors showed the tests were loose
(docs/mutation.md): reading --max-drop, the lasting-drop search at its edges, per-run values in unit order, and
the text both commands print."""

from __future__ import annotations

import pyarrow as pa
import pytest

from assay.verdicts import regression
from assay.core.errors import ConfigError


def test_parse_drop_reads_measure_level_and_allowance():
    measure, level, drop = regression.parse_drop("Success@1=0.02")
    assert (measure.name, level, drop) == ("Success@1", "chunk", 0.02)
    measure, level, drop = regression.parse_drop(" nDCG@10:doc = 3 ")
    assert (measure.name, level, drop) == ("nDCG@10", "doc", 3.0)
    measure, level, _ = regression.parse_drop("Abstain=0.1")
    assert (measure.name, level) == ("Abstain", "query")


def test_parse_drop_says_what_is_wrong():
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
    assert regression.lasting_drop(series(0.5, 0.625, 0.5, 0.5625), 0.03125) == {
        "run_id": "r2", "value": 0.5, "prior_best": 0.625, "prior_best_run": "r1"}


def test_lasting_drop_at_exactly_the_tolerance_is_no_drop():
    assert regression.lasting_drop(series(0.5, 0.25), 0.25) is None
    assert regression.lasting_drop(series(0.5, 0.25), 0.125) == {
        "run_id": "r1", "value": 0.25, "prior_best": 0.5, "prior_best_run": "r0"}


def test_lasting_drop_names_the_first_run_holding_the_best_value():
    assert regression.lasting_drop(series(0.5, 0.5, 0.25), 0.0) == {
        "run_id": "r2", "value": 0.25, "prior_best": 0.5, "prior_best_run": "r0"}


def test_lasting_drop_counts_a_later_recovery_and_the_best_of_what_follows():
    assert regression.lasting_drop(series(0.5, 0.25, 0.5), 0.0) is None
    # r1 and r2 are followed by r2's 0.5, exactly 0.125 below the best before them; r3's 0.375 is not
    assert regression.lasting_drop(series(0.625, 0.25, 0.5, 0.375), 0.125) == {
        "run_id": "r3", "value": 0.375, "prior_best": 0.625, "prior_best_run": "r0"}
    assert regression.lasting_drop(series(0.625, 0.25, 0.5, 0.375), 0.25) is None
    assert regression.lasting_drop([], 0.02) is None
    assert regression.lasting_drop(series(0.5), 0.0) is None


def test_values_by_run_are_each_runs_values_in_unit_order():
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


def point(run_id, value):
    return {"run_id": run_id, "started_at": "2026-11-30T10:00:00", "value": value, "ci_low": value - 0.125,
            "ci_high": value + 0.125, "n": 4}


def test_render_history_says_where_the_drop_began_and_notes_mixed_sets():
    h = {"pipeline": "bm25", "metric": "Success@1", "level": "chunk", "slice": "all", "tolerance": 0.02,
         "comparable_groups": 2, "points": [point("r0", 0.5), point("r1", 0.25)],
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

