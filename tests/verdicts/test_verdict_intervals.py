"""The intervals every figure carries, pinned: Wilson's z, the seeded bootstrap's quantiles, and the default
bootstrap sample count that `assay compare` and `assay ablate` use.

Wilson is checked against Newcombe's closed form (1998, method 4) computed here, independently, with z from
scipy's normal quantile. The bootstrap is pinned to the exact interval of a seeded input: its resampling is
numpy's PCG64 (the same draws on every platform); the only slack allowed, 1e-12, is for the last bits of a
matrix product that another BLAS may sum in another order. Any change to a quantile, to alpha, or to the
number of resamples moves these intervals by far more (see each test's docstring for the mutation it kills).
"""

import inspect
import math

import pytest
from scipy.stats import norm

from assay.verdicts.comparison import compare
from assay.measures import stats
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.measures.stats import bootstrap_mean, paired_bootstrap_delta, paired_bootstrap_deltas, wilson
from assay.runs.runner import BOOTSTRAP_SAMPLES
from assay.store.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

TIGHT = {"rel": 1e-12, "abs": 1e-12}


def newcombe(k, n, z):
    """Wilson's score interval with continuity correction, Newcombe (1998) eq. for method 4."""
    p = k / n
    low = 0.0 if k == 0 else (2 * n * p + z * z - 1 - z * math.sqrt(z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / (
        2 * (n + z * z))
    high = 1.0 if k == n else (2 * n * p + z * z + 1 + z * math.sqrt(z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / (
        2 * (n + z * z))
    return low, high


def plain(k, n, z):
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


@pytest.mark.parametrize("k, n", [(7, 20), (15, 148), (1, 29), (40, 56), (55, 56)])
def test_wilson_uses_the_exact_95_percent_z(k, n):
    """Kills: Z95 changed (1.959963984540054 -> 1.96, or any other z): the bounds move by ~1e-5, which the
    4-decimal table tests of tests/measures/test_stats.py let through."""
    z = norm.ppf(0.975)
    assert stats.Z95 == z
    assert wilson(k, n, continuity=True) == pytest.approx(newcombe(k, n, z), **TIGHT)
    assert wilson(k, n, continuity=False) == pytest.approx(plain(k, n, z), **TIGHT)
    # the default: corrected below 25 questions, plain from 25 on
    assert wilson(k, n) == pytest.approx(newcombe(k, n, z) if n < 25 else plain(k, n, z), **TIGHT)


def test_wilson_pinned():
    """The same, as numbers: continuity-corrected and plain Wilson for 7 of 20."""
    assert wilson(7, 20) == pytest.approx((0.16308667971630933, 0.5905104338485734), **TIGHT)
    assert wilson(7, 20, continuity=False) == pytest.approx((0.18119182410108206, 0.5671457233147638), **TIGHT)


GRADED = [0.0, 0.2, 0.5, 0.9, 1.0, 0.3, 0.7, 0.1]
SKEWED = [0.05, 0.1, 0.0, 0.0, 0.95, 0.2, 0.0, 0.0, 0.1, 0.3, 0.0, 0.6]
WIDE = [(i * 37 % 101) / 100 for i in range(40)]


@pytest.mark.parametrize("values, seed, expected", [
    (GRADED, 0, (0.1640865589445198, 0.8014331496867984)),
    (GRADED, 1, (0.175, 0.8014331496867984)),
    (SKEWED, 0, (0.053907104227353814, 0.5160833725757961)),
    (WIDE, 0, (0.4079755211944152, 0.5936182789552553)),
    (WIDE, 7, (0.4008937171243301, 0.5990410568862375)),
])
def test_a_seeded_bootstrap_interval_is_pinned(values, seed, expected):
    """Kills: alpha changed (0.05 -> 0.1), a bootstrap-t or BCa quantile moved or swapped (alpha/2 <-> 1 - alpha/2,
    the expanded alpha' replaced by alpha/2), the quantile interpolation changed, Z95 changed, the default
    number of resamples changed (1000 -> 999), and the generator reseeded differently."""
    assert bootstrap_mean(values, seed=seed) == pytest.approx(expected, **TIGHT)


def test_a_seeded_paired_delta_is_pinned():
    """Kills the same mutations in the paired delta's mapping to [0, 1] and back (2 low - 1, 2 high - 1)."""
    before, after = [1, 1, 0, 1, 0.5, 1, 1, 0.25], [0, 1, 0, 0.5, 0.5, 0, 1, 0.25]
    assert paired_bootstrap_delta(before, after, seed=0) == pytest.approx(
        (-0.8270390689427928, 0.2155144218221019), **TIGHT)


def test_the_default_bootstrap_sample_count_is_1000():
    """Kills: the default of `samples` changed in bootstrap_mean, paired_bootstrap_delta (both used by `assay
    ablate`: each rung's interval and each delta) or paired_bootstrap_deltas (`assay compare`), or the 1000 a
    run records in its config (runner.BOOTSTRAP_SAMPLES: report, gate). The default and an explicit 1000 give
    the same interval."""
    for fn in (bootstrap_mean, paired_bootstrap_delta, paired_bootstrap_deltas):
        assert inspect.signature(fn).parameters["samples"].default == 1000, fn.__name__
    assert BOOTSTRAP_SAMPLES == 1000
    assert bootstrap_mean(WIDE, seed=3) == bootstrap_mean(WIDE, seed=3, samples=1000)
    before, after = [1, 1, 0, 1, 0.5, 1, 1, 0.25], [0, 1, 0, 0.5, 0.5, 0, 1, 0.25]
    assert paired_bootstrap_delta(before, after, seed=5) == paired_bootstrap_delta(before, after, seed=5, samples=1000)
    assert paired_bootstrap_deltas([(before, after)], seed=5) == [paired_bootstrap_delta(before, after, 5, 1000)]


def test_compare_rows_are_one_inference_at_alpha(tmp_path):
    """Kills: compare's intervals taken from another procedure than its p-values (the paired bootstrap it used
    before), or another alpha: each row's interval and p equal infer() over the same per-question values at
    alpha 0.05, and the interval excludes 0 exactly when p < 0.05, on a real warehouse."""
    from assay.verdicts.inference import infer

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        # 8 questions won and 8 lost: a change of 0 with spread
        write_outcomes(wh, "a", outcomes(32, 20), minutes=0)
        write_outcomes(wh, "b", outcomes(32, 20, first_miss=8), minutes=1)
        result = compare(wh, "a", "b", [parse_measure("Success@1"), parse_measure("RR@10")])
        assert result["alpha"] == 0.05 and "seed" not in result  # the inference draws nothing at random
        for row in (r for r in result["rows"] if r["slice"] == "all"):
            measure = parse_measure(row["metric"])
            va, vb = per_query(wh, "a", measure), per_query(wh, "b", measure)
            qs = sorted(q for q, lvl in va if lvl == row["level"])
            before, after = [va[(q, row["level"])] for q in qs], [vb[(q, row["level"])] for q in qs]
            expected = infer(before, after, alpha=0.05)
            assert (row["ci_low"], row["ci_high"], row["p_value"]) == (expected.low, expected.high, expected.p_value)
            assert (row["ci_low"] <= 0 <= row["ci_high"]) == (row["p_value"] >= 0.05)
            assert row["delta"] == 0.0 and row["p_value"] == 1.0


def test_ablate_rung_intervals_use_1000_resamples(tmp_path):
    """Kills: `assay ablate` measuring its rungs with any count but 1000 (a changed default of bootstrap_mean,
    or a count passed in): each graded measure's interval on a rung equals bootstrap_mean with an explicit 1000
    over the rung's per-question values, on a real warehouse with graded values (relevant chunk at ranks 1-10)."""
    from assay.runs.ablation import Rung, measure_rung
    from verdict_runs import write_ranks

    ranks = [(i * 7) % 11 for i in range(32)]  # 0 (not found) to 10
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        write_ranks(wh, "graded", ranks)
        rung = Rung("synthetic", "graded", run_id="graded")
        measure_rung(wh, rung, seed=0)
    m = rung.metrics[("nDCG@10", "chunk")]  # the ladder's graded measure (the others are 0/1 here: Wilson)
    values = [m["per_query"][q] for q in sorted(m["per_query"])]
    assert len(values) == 32 and len(set(values)) == 11  # 1 / log2(rank + 1) for ranks 1-10, and 0
    expected = bootstrap_mean(values, seed=0, samples=1000)
    assert (m["ci_low"], m["ci_high"]) == expected
    assert expected != bootstrap_mean(values, seed=0, samples=999)  # the input tells them apart
