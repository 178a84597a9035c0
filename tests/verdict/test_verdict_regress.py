"""`assay regress` and `assay history` at the boundaries of their rules, on real DuckDB warehouses.

A metric regresses when its drop exceeds the allowance AND its Holm-adjusted p (within its slice, over the
guarded measures) is below alpha. Every run here is written with prescribed per-question outcomes
(verdict_runs.py): Success@1 is hits/32, and against a baseline with 32 hits a candidate that misses k
questions has drop k/32 (exact in binary floating point) and McNemar p = 2 * 2**-k exactly (k lost, none won).

Each test's docstring names the mutation of src/assay/regression.py it kills; each was made by hand and
seen to fail the test before the test was kept.
"""

import math

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.comparison import run_identity
from assay.metrics.registry import parse_measure
from assay.metrics.significance import holm
from assay.regression import history, lasting_drop, pick_baseline, regress
from assay.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

N = 32
S1 = parse_measure("Success@1")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline with every question hit, and candidates that miss 5, 6 and 7 of the 32."""
    path = tmp_path_factory.mktemp("regress") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "base", outcomes(N, N), minutes=0)
        for k in (5, 6, 7):
            write_outcomes(wh, f"miss{k}", outcomes(N, N - k), minutes=k)
    return path


@pytest.fixture
def wh(runs):
    with Warehouse.open(runs, read_only=True) as opened:
        yield opened


def overall(result, level="doc"):
    (check,) = [c for c in result["checks"] if c["slice"] == "all" and c["level"] == level]
    return check


def test_a_drop_equal_to_the_allowance_does_not_regress(wh):
    """Kills: `c["drop"] > c["max_drop"]` -> `>=` (the max-drop boundary)."""
    result = regress(wh, "miss6", "base", [(S1, "doc", 6 / N)])
    check = overall(result)
    assert (check["drop"], check["max_drop"], check["p_value"], check["p_holm"]) == (0.1875, 0.1875, 0.03125, 0.03125)
    assert check["regressed"] is False and result["regressed"] is False


def test_a_drop_a_hair_beyond_the_allowance_regresses_when_significant(wh):
    """Kills: the drop compared with something other than the allowance (`>` -> `<`, or a margin added to it)."""
    result = regress(wh, "miss6", "base", [(S1, "doc", math.nextafter(6 / N, 0))])
    check = overall(result)
    assert check["drop"] == 0.1875 and check["p_holm"] == 0.03125
    assert check["regressed"] is True and result["regressed"] is True


def test_a_drop_beyond_the_allowance_that_is_not_significant_does_not_regress(wh):
    """Kills: dropping the `p_holm < alpha` requirement (5 misses: p = 0.0625, drop 0.15625 > 0)."""
    result = regress(wh, "miss5", "base", [(S1, "doc", 0.0)])
    check = overall(result)
    assert (check["drop"], check["p_value"], check["p_holm"]) == (0.15625, 0.0625, 0.0625)
    assert check["regressed"] is False and result["regressed"] is False


def test_a_holm_p_equal_to_alpha_does_not_regress(wh):
    """Kills: `p_holm < alpha` -> `<=` (p = 0.0625 exactly at alpha 0.0625; a hair above alpha regresses)."""
    at = regress(wh, "miss5", "base", [(S1, "doc", 0.0)], alpha=0.0625)
    assert overall(at)["regressed"] is False
    above = regress(wh, "miss5", "base", [(S1, "doc", 0.0)], alpha=math.nextafter(0.0625, 1))
    assert overall(above)["regressed"] is True


def test_a_raw_p_below_alpha_whose_holm_p_is_not_does_not_regress(wh):
    """Kills: removing the Holm adjustment (`p_holm` taken as the raw `p_value`). Two guarded measures of the
    same run (Success@1 at document and chunk level), each p = 0.03125 < 0.05; Holm over the two gives 0.0625."""
    result = regress(wh, "miss6", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    for level in ("doc", "chunk"):
        check = overall(result, level)
        assert (check["p_value"], check["p_holm"], check["n_tests"]) == (0.03125, 0.0625, 2)
        assert check["regressed"] is False
    assert result["regressed"] is False


def test_a_holm_p_below_alpha_regresses(wh):
    """Kills: Holm multiplying by more than the number of guarded tests (7 misses: p = 0.015625, Holm over two
    0.03125 < 0.05)."""
    result = regress(wh, "miss7", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    for level in ("doc", "chunk"):
        check = overall(result, level)
        assert (check["p_value"], check["p_holm"], check["n_tests"]) == (0.015625, 0.03125, 2)
        assert check["regressed"] is True


def test_holm_runs_over_the_guarded_measures_only(wh):
    """Kills: removing regress's own Holm loop (keeping paired_rows' adjustment over both levels of Success@1,
    0.0625, where only the document level is guarded: one test, p_holm = p = 0.03125, a regression)."""
    result = regress(wh, "miss6", "base", [(S1, "doc", 0.0)])
    check = overall(result)
    assert (check["p_value"], check["p_holm"], check["n_tests"]) == (0.03125, 0.03125, 1)
    assert check["regressed"] is True


def test_holm_on_a_known_set():
    """Kills: any change to significance.holm's step-down (factor m - rank, running maximum, cap at 1).
    Sorted 1/64, 1/16, 1/8, 1/4 get 4/64, 3/16, 2/8 and 1/4 -> the running maximum keeps 1/4 for the last two."""
    assert holm([0.125, 0.0625, 0.25, 0.015625]) == [0.25, 0.1875, 0.25, 0.0625]
    assert holm([0.0625, 0.09375]) == [0.125, 0.125]  # the second's own 0.09375 is lifted to the first's
    assert holm([0.5, 0.75, 0.5]) == [1.0, 1.0, 1.0]  # capped at 1
    assert holm([0.03125]) == [0.03125]


def test_the_max_drop_allowance_is_read_exactly_from_the_command_line(runs):
    """Kills: `>` -> `>=` at the CLI too: --max-drop equal to the drop exits 0, a little less exits 7."""
    def regress_cli(allowed):
        return CliRunner().invoke(cli, ["regress", "miss6", "--baseline", "base", "--max-drop",
                                        f"Success@1:doc={allowed}", "--warehouse", str(runs)])
    equal = regress_cli("0.1875")
    assert equal.exit_code == 0, equal.output
    assert equal.stdout.splitlines()[-1] == "0 regression(s): no significant regression"
    beyond = regress_cli("0.18")
    assert beyond.exit_code == 7, beyond.output
    assert beyond.stdout.splitlines()[-1] == "4 regression(s); exit code 7"  # 'all' and the three whole-set slices


# -- the baseline -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Runs A < B < C in time, their ids sorting the other way (so an order by id is caught too)."""
    path = tmp_path_factory.mktemp("latest") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "z-run-a", outcomes(N, 32), minutes=0)
        write_outcomes(wh, "y-run-b", outcomes(N, 29), minutes=1)
        write_outcomes(wh, "x-run-c", outcomes(N, 26), minutes=2)
    return path


def test_the_latest_baseline_of_c_is_b_not_a(three_runs):
    """Kills: `earlier[-1]` -> `earlier[0]` (the oldest run taken as the latest), and comparable runs read in
    run-id order instead of start order."""
    with Warehouse.open(three_runs, read_only=True) as wh:
        candidate = run_identity(wh, "x-run-c")
        assert pick_baseline(wh, candidate, "latest", (S1, "doc", 0.0)) == "y-run-b"
        result = regress(wh, "x-run-c", "latest", [(S1, "doc", 0.0)])
        assert result["baseline"] == "y-run-b"
        check = overall(result)
        assert (check["a"], check["b"], check["drop"]) == (29 / 32, 26 / 32, 3 / 32)
        # B's own latest is A; A has none before it
        assert pick_baseline(wh, run_identity(wh, "y-run-b"), "latest", (S1, "doc", 0.0)) == "z-run-a"


def test_the_best_baseline_is_the_highest_on_the_guarded_measure(three_runs):
    """Kills: `max` -> `min` in the 'best' baseline (A has 32 hits, B 29)."""
    with Warehouse.open(three_runs, read_only=True) as wh:
        assert pick_baseline(wh, run_identity(wh, "x-run-c"), "best", (S1, "doc", 0.0)) == "z-run-a"


# -- history ----------------------------------------------------------------------------------------------

def _series(*values):
    return [{"run_id": f"r{i}", "value": v} for i, v in enumerate(values)]


def test_a_series_within_tolerance_has_no_lasting_drop():
    """Kills: ignoring the tolerance (`later[i] < prior_best - tolerance` -> `later[i] < prior_best`) and
    `<` -> `<=` at the tolerance: a fall of exactly the tolerance (1/32, exact) is no lasting drop."""
    assert lasting_drop(_series(1.0, 0.96875, 0.96875), 0.03125) is None
    assert lasting_drop(_series(0.5, 0.75, 0.71875), 0.03125) is None


def test_a_series_beyond_tolerance_reports_where_the_lasting_drop_began():
    """Kills: the same comparison turned the other way, or the drop reported at the wrong point; a fall a hair
    beyond the tolerance (0.0312 against a fall of 0.03125) is a lasting drop, starting at the first point of it.
    (A tolerance one float below 1/32 would not do: 1.0 minus it rounds back to 31/32.)"""
    assert lasting_drop(_series(1.0, 0.96875, 0.96875), 0.0312) == {
        "run_id": "r1", "value": 0.96875, "prior_best": 1.0, "prior_best_run": "r0"}
    assert lasting_drop(_series(0.5, 0.75, 0.6875, 0.6875, 0.703125), 0.03125) == {
        "run_id": "r2", "value": 0.6875, "prior_best": 0.75, "prior_best_run": "r1"}
    # a later run coming back to within the tolerance of the best before it: no lasting drop
    assert lasting_drop(_series(0.5, 0.75, 0.6875, 0.75), 0.03125) is None


def test_history_on_a_warehouse_at_the_tolerance(tmp_path):
    """Kills: ignoring --tolerance in `history` (the series 1, 31/32, 31/32 against tolerance 1/32 and a hair
    0.0312), on a real warehouse through the stored measure values."""
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        for i, hits in enumerate((32, 31, 31)):
            write_outcomes(wh, f"run-{i}", outcomes(N, hits), minutes=i)
        within = history(wh, "synthetic", "Success@1", "doc", tolerance=0.03125)
        assert [(p["run_id"], p["value"]) for p in within["points"]] == [
            ("run-0", 1.0), ("run-1", 0.96875), ("run-2", 0.96875)]
        assert within["lasting_drop"] is None
        beyond = history(wh, "synthetic", "Success@1", "doc", tolerance=0.0312)
        # beyond the tolerance: a candidate; one question of 32 lost is no significant fall (p = 1/2), so not lasting
        assert beyond["drop_test"]["candidate"] == {"run_id": "run-1", "value": 0.96875, "prior_best": 1.0,
                                                    "prior_best_run": "run-0"}
        assert within["drop_test"] is None and beyond["lasting_drop"] is None
