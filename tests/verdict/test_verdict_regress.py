"""`assay regress` and `assay history` at the boundaries of their rules, on real DuckDB warehouses.

A change is candidate - baseline; ``--max-drop M=a`` guards "change >= -a". Significance mode (the default)
regresses when a one-sided paired test of H0 "change >= -a" is rejected at the level the family correction
(Holm by default, over every distinct measure, level and slice checked) gives it; threshold mode when the
change is below -a. Every run here is written with prescribed per-question outcomes (verdict_runs.py):
Success@1 is hits/32; against a baseline with 32 hits, a candidate that misses k questions has change -k/32
(exact in binary floating point), and the one-sided sign-flip p of H0 "change >= -a" is, from its definition
(flip a random subset S; j lost and z unchanged questions flipped), P(j <= a (j + z)) with j ~ Bin(k, 1/2) and
z ~ Bin(32 - k, 1/2) independent: 2**-k at a = 0. The references below compute that with scipy.

Each test's docstring names the mutation of src/assay/regression.py it kills; each was made by hand and
seen to fail the test before the test was kept.
"""

import json
import math

import pytest
from click.testing import CliRunner
from scipy.stats import binom

from assay.cli import cli
from assay.comparison import run_identity
from assay.metrics.registry import parse_measure
from assay.metrics.significance import holm
from assay.regression import history, lasting_drop, pick_baseline, regress
from assay.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

N = 32
S1 = parse_measure("Success@1")


def one_sided_p(k, allowance, n=N):
    """P(j <= allowance * (j + z)), j ~ Bin(k, 1/2), z ~ Bin(n - k, 1/2): the definition, summed by scipy."""
    return sum(binom.pmf(j, k, 0.5) * binom.pmf(z, n - k, 0.5)
               for j in range(k + 1) for z in range(n - k + 1) if j <= allowance * (j + z) + 1e-12)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline with every question hit, and candidates that miss 1, 4, 5, 6 and 7 of the 32."""
    path = tmp_path_factory.mktemp("regress") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "base", outcomes(N, N), minutes=0)
        for k in (1, 4, 5, 6, 7):
            write_outcomes(wh, f"miss{k}", outcomes(N, N - k), minutes=k)
    return path


@pytest.fixture
def wh(runs):
    with Warehouse.open(runs, read_only=True) as opened:
        yield opened


def overall(result, level="doc"):
    (check,) = [c for c in result["checks"] if c["slice"] == "all" and c["level"] == level]
    return check


def test_the_one_sided_p_at_no_allowance_is_two_to_the_minus_k(wh):
    """Kills: a two-sided p (McNemar's 2 * 2**-k) where the rule is one-sided, and the decision reversed: 5
    lost of 32 gives p = 1/32 < 0.05 (regressed), 4 lost 1/16 (not)."""
    five = overall(regress(wh, "miss5", "base", [(S1, "doc", 0.0)]))
    assert (five["change"], five["p_value"], five["family_size"], five["decided_at"]) == (-5 / 32, 1 / 32, 1, 0.05)
    assert five["p_value"] == pytest.approx(one_sided_p(5, 0.0))
    assert five["regressed"] is True and five["decision"] == "regressed" and five["ci_high"] < five["null"] == 0
    # the bound is the largest change the one-sided test does not reject at 0.05 (scipy's reference)
    hi = five["ci_high"]
    assert one_sided_p(5, -hi) >= 0.05 > one_sided_p(5, -hi - 1e-6) and hi == pytest.approx(-1 / 18)
    four = overall(regress(wh, "miss4", "base", [(S1, "doc", 0.0)]))
    assert four["p_value"] == 1 / 16 and four["regressed"] is False and four["ci_high"] >= 0


def test_the_allowance_is_the_null_of_the_test(wh):
    """Kills: testing change < 0 instead of change < -allowance. 7 lost: at a = 0.02 only the flips with no lost
    question count (p = 2**-7, regressed); at a = 0.1 also those where a few lost questions are outweighed by
    unchanged ones (p from scipy above 0.05: not regressed although the change, -0.219, is far below -0.1)."""
    near = overall(regress(wh, "miss7", "base", [(S1, "doc", 0.02)]))
    assert near["p_value"] == pytest.approx(2 ** -7) and near["regressed"] is True and near["null"] == -0.02
    far = overall(regress(wh, "miss7", "base", [(S1, "doc", 0.1)]))
    assert far["p_value"] == pytest.approx(one_sided_p(7, 0.1)) and far["p_value"] > 0.05
    assert far["regressed"] is False and far["ci_high"] >= -0.1


def test_a_p_equal_to_alpha_does_not_regress(wh):
    """Kills: `p < level` -> `<=` (p = 1/32 exactly at alpha 1/32; a hair above alpha regresses)."""
    assert overall(regress(wh, "miss5", "base", [(S1, "doc", 0.0)], alpha=1 / 32))["regressed"] is False
    assert overall(regress(wh, "miss5", "base", [(S1, "doc", 0.0)], alpha=math.nextafter(1 / 32, 1)))["regressed"]


def test_holm_over_two_guarded_measures(wh):
    """Kills: removing the family correction, or Bonferroni taken for Holm. Success@1 at document and chunk
    level, each p = 1/32: Holm over two tests 1/32 at 0.025 (not rejected, adjusted 1/16); 6 lost, each 1/64:
    both rejected (1/64 < 0.025, then < 0.05)."""
    result = regress(wh, "miss5", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    for level in ("doc", "chunk"):
        check = overall(result, level)
        assert (check["p_value"], check["p_adjusted"], check["family_size"]) == (1 / 32, 1 / 16, 2)
        assert check["regressed"] is False and check["ci_high"] >= 0
    assert result["family_size"] == 2 and result["correction"] == "holm"
    uncorrected = regress(wh, "miss5", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)], correction="none")
    assert all(c["regressed"] for c in uncorrected["checks"])
    six = regress(wh, "miss6", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    assert all(c["regressed"] and c["ci_high"] < 0 for c in six["checks"])


def test_holm_on_a_known_set():
    """Kills: any change to significance.holm's step-down (factor m - rank, running maximum, cap at 1).
    Sorted 1/64, 1/16, 1/8, 1/4 get 4/64, 3/16, 2/8 and 1/4 -> the running maximum keeps 1/4 for the last two."""
    assert holm([0.125, 0.0625, 0.25, 0.015625]) == [0.25, 0.1875, 0.25, 0.0625]
    assert holm([0.0625, 0.09375]) == [0.125, 0.125]  # the second's own 0.09375 is lifted to the first's
    assert holm([0.5, 0.75, 0.5]) == [1.0, 1.0, 1.0]  # capped at 1
    assert holm([0.03125]) == [0.03125]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    """32 questions, 16 in category a and 16 in b; the candidates lose 5 and 6 questions, all in a."""
    path = tmp_path_factory.mktemp("sliced") / "w.duckdb"
    cats = ["a"] * 16 + ["b"] * 16
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "base", outcomes(N, N), minutes=0, categories=cats)
        write_outcomes(wh, "lose5", outcomes(N, N - 5), minutes=1, categories=cats)
        write_outcomes(wh, "lose6", outcomes(N, N - 6), minutes=2, categories=cats)
    return path


def test_the_family_is_every_slice_checked(sliced):
    """Kills: Holm within each slice only (the old rule: each slice one test at 0.05). The family is all,
    category=a, category=b (form and hard_class hold every question: the same test as all, decided once):
    5 lost gives p = 1/32 in all and in category=a, above 0.05/3, so nothing regresses; uncorrected, both do.
    6 lost: 1/64 < 0.05/3, then < 0.05/2: both regress, category=b (p = 1) does not."""
    with Warehouse.open(sliced, read_only=True) as wh:
        five = regress(wh, "lose5", "base", [(S1, "doc", 0.0)])
        by = {c["slice"]: c for c in five["checks"]}
        assert five["family_size"] == 3 and set(by) >= {"all", "category=a", "category=b"}
        assert (by["all"]["p_value"], by["category=a"]["p_value"], by["category=b"]["p_value"]) == (1 / 32, 1 / 32, 1.0)
        assert not five["regressed"]
        # a slice holding every question (form, hard_class here) is the test of all, decided once
        whole = [c for c in five["checks"] if c["same_as_all"]]
        assert whole and all((c["n"], c["change"], c["p_value"], c["decided_at"]) == (32, -5 / 32, 1 / 32, 0.05 / 3)
                             for c in whole)
        assert by["category=a"]["decided_at"] == pytest.approx(0.05 / 3)
        none = regress(wh, "lose5", "base", [(S1, "doc", 0.0)], correction="none")
        assert {c["slice"] for c in none["checks"] if c["regressed"]} >= {"all", "category=a"}
        six = {c["slice"]: c for c in regress(wh, "lose6", "base", [(S1, "doc", 0.0)])["checks"]}
        assert six["all"]["regressed"] and six["category=a"]["regressed"] and not six["category=b"]["regressed"]
        assert six["category=a"]["change"] == -6 / 16
        bonferroni = {c["slice"]: c for c in regress(wh, "lose6", "base", [(S1, "doc", 0.0)],
                                                       correction="bonferroni")["checks"]}
        assert bonferroni["all"]["decided_at"] == pytest.approx(0.05 / 3) and bonferroni["all"]["regressed"]


def test_threshold_mode_decides_by_the_change_alone(wh):
    """Kills: `change < -allowance` -> `<=` in threshold mode, and significance consulted there: a change equal
    to the floor passes, a hair below fails, and one lost question of 32 (p = 1) fails an allowance of 0."""
    at = overall(regress(wh, "miss6", "base", [(S1, "doc", 6 / N)], mode="threshold"))
    assert (at["change"], at["null"], at["regressed"]) == (-0.1875, -0.1875, False)
    below = overall(regress(wh, "miss6", "base", [(S1, "doc", math.nextafter(6 / N, 0))], mode="threshold"))
    assert below["regressed"] is True
    one = regress(wh, "miss1", "base", [(S1, "doc", 0.0)], mode="threshold")
    assert overall(one)["regressed"] is True and overall(one)["p_value"] == 1.0
    assert one["correction"] == "none" and overall(one)["p_adjusted"] is None
    # the significance mode does not flag it
    assert overall(regress(wh, "miss1", "base", [(S1, "doc", 0.0)]))["regressed"] is False


def test_the_cli_states_the_mode_the_family_and_the_sign(runs):
    """Kills: --mode or --correction not passed through, and a positive "drop" beside a negative change."""
    def regress_cli(*args):
        return CliRunner().invoke(cli, ["regress", "miss5", "--baseline", "base", *args, "--warehouse", str(runs)])
    sig = regress_cli("--max-drop", "Success@1:doc=0")
    assert sig.exit_code == 7, sig.output
    lines = sig.stdout.splitlines()
    # the verdict in words first: the three slices holding every question repeat the one check of 'all'. MDC by
    # hand: 5 of 32 changes are -1, sd = sqrt(32/31 (5/32 - (5/32)**2)) = 0.3689; (t(0.95, 31) 1.6955 + t(0.8, 31)
    # 0.8534) * 0.3689 / sqrt(32) = 0.166
    assert lines[0] == ("The candidate regressed on 1 of 1 check: Success@1 (doc) changed by -0.156 (from 1.000 to "
                        "0.844), significantly below its floor +0.000 (one-sided 95% bound -0.056, p = 0.031, 0.031 "
                        "after the correction, Holm over 1 check at alpha 0.05). With 32 questions, falls past the "
                        "floor smaller than 0.166 cannot be told from noise (80% power at alpha 0.05, one-sided, the "
                        "level this check was decided at).")
    assert lines[1] == "" and json.loads(regress_cli("--max-drop", "Success@1:doc=0", "--format", "json").stdout)[
        "verdict"]["sentence"] == lines[0]
    lines = lines[2:]
    assert lines[1].startswith("significance mode: a check fails when its change (candidate - baseline) is "
                               "significantly below its floor (-allowance): one-sided paired test, Holm over 1 "
                               "checks at alpha 0.05")
    assert lines[4].split() == ["REGRESSED", "Success@1:doc", "all", "1.000", "0.844", "-0.156", "+0.000",
                                "<=", "-0.056", "(95%)", "0.0312", "0.0312", "32"]
    assert lines[-1] == "4 regression(s); exit code 7"  # 'all' and the three whole-set slices
    threshold = regress_cli("--max-drop", "Success@1:doc=0.15625", "--mode", "threshold")
    assert threshold.exit_code == 0, threshold.output
    assert threshold.stdout.splitlines()[0].startswith("No regression: no change is below its floor in 1 check "
                                                       "(threshold mode); Success@1 (doc) changed by -0.156")
    assert threshold.stdout.splitlines()[3].startswith("threshold mode:")
    assert threshold.stdout.splitlines()[-1] == "0 regression(s): no change below its floor"
    assert regress_cli("--max-drop", "Success@1:doc=0.15", "--mode", "threshold").exit_code == 7
    holm2 = regress_cli("--max-drop", "Success@1:doc=0", "--max-drop", "Success@1:chunk=0")
    assert holm2.exit_code == 0 and "Holm over 2 checks" in holm2.stdout
    none2 = regress_cli("--max-drop", "Success@1:doc=0", "--max-drop", "Success@1:chunk=0", "--correction", "none")
    assert none2.exit_code == 7 and "no correction over 2 checks" in none2.stdout


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
        assert (check["a"], check["b"], check["change"]) == (29 / 32, 26 / 32, -3 / 32)
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
