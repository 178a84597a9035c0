"""`assay regress` and `assay history` at the boundaries of their rules, on real DuckDB warehouses.

A change is candidate - baseline; ``--max-drop M=a`` guards "change >= -a". Significance mode (the default)
regresses when a one-sided paired test of H0 "change >= -a" is rejected at the level the family correction
(Holm by default, over every distinct measure, level and slice checked) gives it; threshold mode when the
change is below -a. Every run here is written with prescribed per-question outcomes (verdict_runs.py):
Success@1 is hits/32; against a baseline with 32 hits, a candidate that misses k questions (k lost, none won)
has change -k/32 (exact in binary floating point). The test is the score test of assay.verdicts.inference:
p = Phi(Z(-a)), Z Tango's score statistic for paired 0/1 outcomes. At a = 0 that is McNemar's test without
continuity correction, one tail: Z = -k / sqrt(k), p = Phi(-sqrt(k)) = chi2.sf(k, 1) / 2. The references below
are independent of the code under test: Z with Tango's restricted estimate found by maximising the trinomial
likelihood numerically (as tango_z in tests/verdicts/test_inference.py), p through scipy's normal tail, the
one-sided bound by scipy's brentq on that Z.

Each test's docstring names the mutation of src/assay/verdicts/regression.py it kills; each was made by hand and
seen to fail the test before the test was kept.
"""

import json
import math

import pytest
from click.testing import CliRunner
from scipy.optimize import brentq
from scipy.stats import chi2, norm, t

from assay.cli import cli
from assay.verdicts.comparison import run_identity
from assay.measures.registry import parse_measure
from assay.verdicts.significance import holm
from assay.verdicts.regression import history, lasting_drop, pick_baseline, regress
from assay.store.warehouse import Warehouse
from verdicts.reference_score import tango_z
from verdict_runs import outcomes, write_outcomes

N = 32
S1 = parse_measure("Success@1")


def one_sided_p(lost, allowance, n=N):
    """p of H0 "change >= -allowance" against "change < -allowance" when ``lost`` of ``n`` questions are lost
    and none won: Phi(Z(-allowance))."""
    return norm.cdf(tango_z(0, lost, n, -allowance))


def one_sided_bound(lost, alpha, n=N):
    """The one-sided 1 - alpha bound: the largest change the test does not reject, where Z falls to -z_{1-alpha}."""
    return brentq(lambda x: tango_z(0, lost, n, x) + norm.ppf(1 - alpha), -lost / n, 1 - 1e-9, xtol=1e-13)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A baseline with every question hit, and candidates that miss 1, 2, 3, 4, 6 and 7 of the 32."""
    path = tmp_path_factory.mktemp("regress") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "base", outcomes(N, N), minutes=0)
        for k in (1, 2, 3, 4, 6, 7):
            write_outcomes(wh, f"miss{k}", outcomes(N, N - k), minutes=k)
    return path


@pytest.fixture
def wh(runs):
    with Warehouse.open(runs, read_only=True) as opened:
        yield opened


def overall(result, level="doc"):
    (check,) = [c for c in result["checks"] if c["slice"] == "all" and c["level"] == level]
    return check


def test_the_one_sided_p_at_no_allowance_is_mcnemars_lower_tail(wh):
    """Kills: a two-sided p (McNemar's chi2.sf(k, 1), twice the one tail) where the rule is one-sided, and the
    decision reversed: 3 lost of 32 gives p = Phi(-sqrt(3)) = 0.042 < 0.05 (regressed; two-sided it would be
    0.083), 2 lost Phi(-sqrt(2)) = 0.079 (not)."""
    three = overall(regress(wh, "miss3", "base", [(S1, "doc", 0.0)]))
    assert (three["change"], three["family_size"], three["decided_at"]) == (-3 / 32, 1, 0.05)
    assert three["p_value"] == pytest.approx(norm.cdf(-math.sqrt(3)), rel=1e-12)
    assert three["p_value"] == pytest.approx(chi2.sf(3, 1) / 2, rel=1e-12) and three["p_value"] < 0.05 < chi2.sf(3, 1)
    assert three["regressed"] is True and three["decision"] == "regressed" and three["ci_high"] < three["null"] == 0
    assert three["alternative"] == "less" and three["method"] == "tango-score"
    # the bound is the largest change the one-sided test does not reject at 0.05 (scipy's reference)
    hi = three["ci_high"]
    assert hi == pytest.approx(one_sided_bound(3, 0.05), abs=1e-7) and hi == pytest.approx(-0.00848, abs=1e-5)
    assert one_sided_p(3, -hi) == pytest.approx(0.05, rel=1e-6)
    two = overall(regress(wh, "miss2", "base", [(S1, "doc", 0.0)]))
    assert two["p_value"] == pytest.approx(norm.cdf(-math.sqrt(2)), rel=1e-12) and two["p_value"] > 0.05
    assert two["regressed"] is False and two["ci_high"] >= 0
    assert two["ci_high"] == pytest.approx(one_sided_bound(2, 0.05), abs=1e-7)


def test_the_allowance_is_the_null_of_the_test(wh):
    """Kills: testing change < 0 instead of change < -allowance, in the test or in the p the family correction
    reads. 7 lost (change -0.219): at a = 0.02, p = 0.006
    (regressed); at a = 0.15, Tango's Z at -0.15 gives p = 0.138 above 0.05: not regressed although the change
    is below -0.15 (and at 0 the test would reject, p = Phi(-sqrt(7)) = 0.004)."""
    near = overall(regress(wh, "miss7", "base", [(S1, "doc", 0.02)]))
    assert near["p_value"] == pytest.approx(one_sided_p(7, 0.02), rel=1e-6) and near["p_value"] < 0.05
    assert near["regressed"] is True and near["null"] == near["tested_null"] == -0.02
    far = overall(regress(wh, "miss7", "base", [(S1, "doc", 0.15)]))
    assert far["p_value"] == pytest.approx(one_sided_p(7, 0.15), rel=1e-6) and far["p_value"] > 0.05
    assert one_sided_p(7, 0.0) < 0.05 and far["change"] == -7 / 32 < -0.15
    assert far["regressed"] is False and far["ci_high"] >= -0.15
    assert far["ci_high"] == pytest.approx(one_sided_bound(7, 0.05), abs=1e-7)
    # the family correction reads each check's p at its own null: doc at -0.15 (0.138), chunk at 0 (0.004);
    # Holm rejects chunk at 0.025 and leaves doc at 0.05 with its own p (adjusted max(2 * 0.004, 0.138))
    both = regress(wh, "miss7", "base", [(S1, "doc", 0.15), (S1, "chunk", 0.0)])
    doc, chunk = overall(both, "doc"), overall(both, "chunk")
    assert doc["p_adjusted"] == pytest.approx(one_sided_p(7, 0.15), rel=1e-6) and doc["decided_at"] == 0.05
    assert chunk["p_adjusted"] == pytest.approx(2 * one_sided_p(7, 0.0), rel=1e-6) and chunk["decided_at"] == 0.025
    assert (doc["regressed"], chunk["regressed"]) == (False, True)


def test_a_p_equal_to_alpha_does_not_regress(wh):
    """Kills: `p < level` -> `<=`. 1 lost of 32: Z = -1 exactly, so p = Phi(-1), which the code and scipy give to
    the last bit; at alpha = that p the check does not regress, at a hair above alpha it does."""
    at = float(norm.cdf(-1.0))
    one = overall(regress(wh, "miss1", "base", [(S1, "doc", 0.0)], alpha=at))
    assert one["p_value"] == at == one["decided_at"] and one["regressed"] is False
    assert overall(regress(wh, "miss1", "base", [(S1, "doc", 0.0)], alpha=math.nextafter(at, 1)))["regressed"]


def test_holm_over_two_guarded_measures(wh):
    """Kills: removing the family correction. Success@1 at document and chunk level, each 3 lost: p = Phi(-sqrt(3))
    = 0.042 each; Holm over two tests it at 0.025 (not rejected, adjusted 0.083); uncorrected both regress. 4 lost,
    each Phi(-2) = 0.023: both rejected (< 0.025, then < 0.05)."""
    p3, p4 = norm.cdf(-math.sqrt(3)), norm.cdf(-2.0)
    assert 0.025 < p3 < 0.05 and p4 < 0.025
    result = regress(wh, "miss3", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    for level in ("doc", "chunk"):
        check = overall(result, level)
        assert (check["p_value"], check["p_adjusted"]) == (pytest.approx(p3, rel=1e-12), pytest.approx(2 * p3))
        assert check["family_size"] == 2 and check["decided_at"] == 0.025
        assert check["regressed"] is False and check["ci_high"] >= 0
        # the bound is at the level the check was decided at
        assert check["ci_high"] == pytest.approx(one_sided_bound(3, 0.025), abs=1e-7)
    assert result["family_size"] == 2 and result["correction"] == "holm" and not result["regressed"]
    uncorrected = regress(wh, "miss3", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)], correction="none")
    assert all(c["regressed"] for c in uncorrected["checks"])
    four = regress(wh, "miss4", "base", [(S1, "doc", 0.0), (S1, "chunk", 0.0)])
    assert all(c["regressed"] and c["ci_high"] < 0 for c in four["checks"])
    assert {c["decided_at"] for c in four["checks"] if c["slice"] == "all"} == {0.025, 0.05}


def test_holm_on_a_known_set():
    """Kills: any change to significance.holm's step-down (factor m - rank, running maximum, cap at 1).
    Sorted 1/64, 1/16, 1/8, 1/4 get 4/64, 3/16, 2/8 and 1/4 -> the running maximum keeps 1/4 for the last two."""
    assert holm([0.125, 0.0625, 0.25, 0.015625]) == [0.25, 0.1875, 0.25, 0.0625]
    assert holm([0.0625, 0.09375]) == [0.125, 0.125]  # the second's own 0.09375 is lifted to the first's
    assert holm([0.5, 0.75, 0.5]) == [1.0, 1.0, 1.0]  # capped at 1
    assert holm([0.03125]) == [0.03125]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    """32 questions, 16 in category a and 16 in b; the candidates lose 4 and 5 questions, all in a."""
    path = tmp_path_factory.mktemp("sliced") / "w.duckdb"
    cats = ["a"] * 16 + ["b"] * 16
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "base", outcomes(N, N), minutes=0, categories=cats)
        write_outcomes(wh, "lose4", outcomes(N, N - 4), minutes=1, categories=cats)
        write_outcomes(wh, "lose5", outcomes(N, N - 5), minutes=2, categories=cats)
    return path


def test_the_family_is_every_slice_checked(sliced):
    """Kills: Holm within each slice only (the old rule: each slice one test at 0.05). The family is all,
    category=a, category=b (form and hard_class hold every question: the same test as all, decided once).
    McNemar's Z at 0 reads only the lost and won questions, so all and category=a get the same p: 4 lost gives
    Phi(-2) = 0.023 in both, above 0.05/3, so nothing regresses; uncorrected, both do. 5 lost: Phi(-sqrt(5)) =
    0.013 < 0.05/3, then < 0.05/2: both regress; category=b, unchanged (Z = 0, p = 1/2), does not."""
    p4, p5 = norm.cdf(-2.0), norm.cdf(-math.sqrt(5))
    assert 0.05 / 3 < p4 < 0.05 and p5 < 0.05 / 3
    with Warehouse.open(sliced, read_only=True) as wh:
        four = regress(wh, "lose4", "base", [(S1, "doc", 0.0)])
        by = {c["slice"]: c for c in four["checks"]}
        assert four["family_size"] == 3 and set(by) >= {"all", "category=a", "category=b"}
        assert (by["all"]["p_value"], by["category=a"]["p_value"], by["category=b"]["p_value"]) == (
            pytest.approx(p4, rel=1e-12), pytest.approx(p4, rel=1e-12), 0.5)
        assert not four["regressed"]
        # a slice holding every question (form, hard_class here) is the test of all, decided once
        whole = [c for c in four["checks"] if c["same_as_all"]]
        assert whole and all((c["n"], c["change"], c["p_value"], c["decided_at"])
                             == (32, -4 / 32, by["all"]["p_value"], 0.05 / 3) for c in whole)
        assert by["category=a"]["decided_at"] == pytest.approx(0.05 / 3)
        assert (by["category=a"]["n"], by["category=a"]["change"]) == (16, -4 / 16)
        none = regress(wh, "lose4", "base", [(S1, "doc", 0.0)], correction="none")
        assert {c["slice"] for c in none["checks"] if c["regressed"]} >= {"all", "category=a"}
        five = {c["slice"]: c for c in regress(wh, "lose5", "base", [(S1, "doc", 0.0)])["checks"]}
        assert five["all"]["regressed"] and five["category=a"]["regressed"] and not five["category=b"]["regressed"]
        assert five["category=a"]["change"] == -5 / 16
        assert five["all"]["p_value"] == pytest.approx(p5, rel=1e-12)
        bonferroni = {c["slice"]: c for c in regress(wh, "lose5", "base", [(S1, "doc", 0.0)],
                                                       correction="bonferroni")["checks"]}
        assert bonferroni["all"]["decided_at"] == pytest.approx(0.05 / 3) and bonferroni["all"]["regressed"]


def test_threshold_mode_decides_by_the_change_alone(wh):
    """Kills: `change < -allowance` -> `<=` in threshold mode, and significance consulted there: a change equal
    to the floor passes, a hair below fails, and one lost question of 32 (two-sided p of "change = 0", McNemar's
    chi2.sf(1, 1) = 0.317, shown for information) fails an allowance of 0."""
    at = overall(regress(wh, "miss6", "base", [(S1, "doc", 6 / N)], mode="threshold"))
    assert (at["change"], at["null"], at["regressed"]) == (-0.1875, -0.1875, False)
    below = overall(regress(wh, "miss6", "base", [(S1, "doc", math.nextafter(6 / N, 0))], mode="threshold"))
    assert below["regressed"] is True
    one = regress(wh, "miss1", "base", [(S1, "doc", 0.0)], mode="threshold")
    assert overall(one)["regressed"] is True and overall(one)["p_value"] == pytest.approx(chi2.sf(1, 1), rel=1e-12)
    assert overall(one)["alternative"] == "two-sided" and overall(one)["tested_null"] == 0.0
    assert one["correction"] == "none" and overall(one)["p_adjusted"] is None
    # the significance mode does not flag it (one-sided p = Phi(-1) = 0.159)
    assert overall(regress(wh, "miss1", "base", [(S1, "doc", 0.0)]))["regressed"] is False


def test_the_cli_states_the_mode_the_family_and_the_sign(runs):
    """Kills: --mode or --correction not passed through, and a positive "drop" beside a negative change."""
    def regress_cli(*args):
        return CliRunner().invoke(cli, ["regress", "miss3", "--baseline", "base", *args, "--warehouse", str(runs)])
    sig = regress_cli("--max-drop", "Success@1:doc=0")
    assert sig.exit_code == 7, sig.output
    lines = sig.stdout.splitlines()
    # the verdict in words first: the three slices holding every question repeat the one check of 'all'. The
    # figures from the references: p = Phi(-sqrt(3)), the bound where Tango's Z = -z(0.95); the MDC from its
    # formula: 3 of 32 changes are -1, sd = sqrt(32/31 (3/32 - (3/32)**2)); (t(0.95, 31) + t(0.8, 31)) sd / sqrt(32)
    p, bound = one_sided_p(3, 0.0), one_sided_bound(3, 0.05)
    sd = math.sqrt(32 / 31 * (3 / 32 - (3 / 32) ** 2))
    mdc = (t.ppf(0.95, 31) + t.ppf(0.8, 31)) * sd / math.sqrt(32)
    assert (f"{p:.3f}", f"{p:.4f}", f"{bound:+.3f}", f"{mdc:.3f}") == ("0.042", "0.0416", "-0.008", "0.133")
    assert lines[0] == ("The candidate regressed on 1 of 1 check: Success@1 (doc) changed by -0.094 (from 1.000 to "
                        "0.906), significantly below its floor +0.000 (one-sided 95% bound -0.008, p = 0.042, 0.042 "
                        "after the correction, Holm over 1 check at alpha 0.05). With 32 questions, falls past the "
                        "floor smaller than 0.133 cannot be told from noise (80% power at alpha 0.05, one-sided, the "
                        "level this check was decided at).")
    assert lines[1] == "" and json.loads(regress_cli("--max-drop", "Success@1:doc=0", "--format", "json").stdout)[
        "verdict"]["sentence"] == lines[0]
    lines = lines[2:]
    assert lines[1].startswith("significance mode: a check fails when its change (candidate - baseline) is "
                               "significantly below its floor (-allowance): one-sided paired test, Holm over 1 "
                               "checks at alpha 0.05")
    assert lines[4].split() == ["REGRESSED", "Success@1:doc", "all", "1.000", "0.906", "-0.094", "+0.000",
                                "<=", "-0.008", "(95%)", "0.0416", "0.0416", "32"]
    assert lines[-1] == "4 regression(s); exit code 7"  # 'all' and the three whole-set slices
    threshold = regress_cli("--max-drop", "Success@1:doc=0.09375", "--mode", "threshold")
    assert threshold.exit_code == 0, threshold.output
    assert threshold.stdout.splitlines()[0].startswith("No regression: no change is below its floor in 1 check "
                                                       "(threshold mode); Success@1 (doc) changed by -0.094")
    assert threshold.stdout.splitlines()[3].startswith("threshold mode:")
    assert threshold.stdout.splitlines()[-1] == "0 regression(s): no change below its floor"
    assert regress_cli("--max-drop", "Success@1:doc=0.09", "--mode", "threshold").exit_code == 7
    # Holm over two checks each at p = 0.042 tests them at 0.025: none regresses; uncorrected both do
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
