"""Intervals of degenerate samples (n = 1 and 2, all values equal, two distinct values, ceilings at 0 or 1) are
finite and are the documented ones, held to computations written here from the formulas, sharing no code with
src/assay/measures/stats.py or tests/measures/reference_stats.py: Wilson's closed form, and the exact bootstrap
of two values enumerated resample by resample."""

import itertools
import math
import warnings

import numpy as np
import pytest

from assay.measures import special, stats

Z = 1.959963984540054  # the normal's 0.975 quantile


def wilson_cc(successes: float, n: int) -> tuple[float, float]:
    """Newcombe's (1998) continuity-corrected Wilson interval, from the formula (his method 4)."""

    def lower():
        if successes - 0.5 <= 0:
            return 0.0
        p = successes / n
        inside = Z * Z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)
        return max(0.0, (2 * n * p + Z * Z - 1 - Z * math.sqrt(max(inside, 0.0))) / (2 * (n + Z * Z)))

    def upper():
        if successes + 0.5 >= n:
            return 1.0
        p = successes / n
        inside = Z * Z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)
        return min(1.0, (2 * n * p + Z * Z + 1 + Z * math.sqrt(max(inside, 0.0))) / (2 * (n + Z * Z)))

    return lower(), upper()


def test_the_independent_wilson_is_the_codes():
    """A guard on the helper below: Newcombe's printed formula and the code's root-at-p-1/2n agree."""
    for n in (1, 2, 3, 10, 56):
        for k in np.linspace(0, n, 4 * n + 1):
            assert wilson_cc(k, n) == pytest.approx(stats.wilson(k, n, continuity=True), abs=1e-12), (k, n)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 56])
@pytest.mark.parametrize("v", [0.0, 1.0, 0.25, 0.9])
def test_no_spread_is_the_edge_widening(n, v):
    """All n values equal to v (n = 1 included): [v (1 - u), v + (1 - v) u], u the bound on a never-seen event;
    at the ceiling and the floor exactly Wilson's n of n and 0 of n."""
    u = wilson_cc(0, n)[1]
    low, high = stats.interval([v] * n, "bootstrap", seed=0, samples=1000)
    assert (low, high) == pytest.approx((v * (1 - u), v + (1 - v) * u), abs=1e-15)
    if v in (0.0, 1.0):
        assert (low, high) == pytest.approx(wilson_cc(v * n, n), abs=1e-12)


def exact_two_value_interval(a: float, b: float) -> tuple[float, float]:
    """The documented interval of two values a < b, from the exact bootstrap (the 4 equally likely resamples).

    Expanded BCa: at n = 2 alpha'/2 = Phi(-sqrt(2) t_{1, 0.975}) ~ 1e-72, so its levels are the extremes of the
    resampled means: [a, b]. Bootstrap-t: the resamples (a, a) and (b, b) have no spread and are studentized by
    their Wilson width / 2z; (a, b) and (b, a) give T* = 0. Each extreme T* holds a quarter of the mass, more than
    2.5%, so the t quantiles are those two pivots; the t interval is clipped to Wilson on the sum. The hull with the
    edge widening [m (1 - u), m + (1 - m) u], u = 2 / (n + 2) = 1/2, is the interval.
    """
    m = (a + b) / 2
    se = abs(b - a) / 2  # sd (ddof 1) = abs(b - a) / sqrt(2), over sqrt(n)
    pivots = []
    for i, j in itertools.product((0, 1), repeat=2):
        x, y = (a, b)[i], (a, b)[j]
        shift = (x + y) / 2 - m
        if x == y:
            lo, hi = wilson_cc(2 * x, 2)
            pivots.append(shift / ((hi - lo) / (2 * Z)))
        else:
            pivots.append(0.0)
    t_low, t_high = m - max(pivots) * se, m + -min(pivots) * se
    worst = wilson_cc(a + b, 2)
    t_low, t_high = max(t_low, worst[0]), min(t_high, worst[1])
    u = 2 / (2 + 2)  # the share of unseen questions a sample with spread is widened by: 2 / (n + 2)
    low = min(a, t_low, m * (1 - u))
    high = max(b, t_high, m + (1 - m) * u)
    return min(max(low, 0.0), m), max(min(high, 1.0), m)


@pytest.mark.parametrize("pair", [(0.2, 0.4), (0.0, 1.0), (0.0, 0.5), (0.5, 1.0), (0.9, 1.0), (0.0, 0.05),
                                  (0.33, 0.34), (0.1, 0.7)])
@pytest.mark.parametrize("seed", [0, 7, 12345])
def test_two_values_are_the_exact_bootstraps_interval(pair, seed):
    want = exact_two_value_interval(*pair)
    for values in (pair, pair[::-1]):
        got = stats.interval(list(values), "bootstrap", seed=seed, samples=1000)
        assert all(math.isfinite(x) for x in got)
        assert got == pytest.approx(want, abs=1e-12), (values, got, want)


def test_the_reported_case_is_finite():
    """Issue 25: interval([0.2, 0.4], 'bootstrap', 0, 1000) gave (0.0594, nan)."""
    low, high = stats.interval([0.2, 0.4], "bootstrap", 0, 1000)
    # the widening by half the questions (2 / (n + 2)) is the widest part: [0.3 (1 - 1/2), 0.3 + 0.7 / 2]
    assert (low, high) == pytest.approx((0.15, 0.65), abs=1e-15)
    assert high == pytest.approx(exact_two_value_interval(0.2, 0.4)[1], abs=1e-12) and high < 1


def _degenerate_samples():
    rng = np.random.default_rng(25)
    for n in (1, 2, 3, 4, 5, 7):
        for _ in range(12):
            x, y = rng.random(2)
            yield rng.choice([x, y], n)  # two distinct values (or one, by chance)
            yield rng.choice([0.0, 1.0], n)  # 0/1 scored as graded
            yield np.where(rng.random(n) < 0.8, 1.0, x)  # at the ceiling but for a few
            yield np.where(rng.random(n) < 0.8, 0.0, y)  # at the floor but for a few
            yield rng.random(n)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("with_scipy", [True, False])
def test_degenerate_samples_give_finite_intervals_around_the_mean_without_warnings(monkeypatch, with_scipy):
    """Every small or degenerate sample, any seed and resample count (1 included), with and without scipy: a finite
    interval within [0, 1] that holds the mean and the edge widening, and numpy says nothing."""
    if not with_scipy:
        monkeypatch.setattr(stats, "_normal_and_t", lambda: (special.ndtr, special.ndtri, special.stdtrit))
    samples_list = list(_degenerate_samples())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for values in samples_list:
            n, m = len(values), float(np.mean(values))
            flat = bool(np.all(values == values[0]))
            u = wilson_cc(0, n)[1] if flat else 2 / (n + 2)
            for seed, samples in ((0, 1), (3, 10), (7, 1000)):
                low, high = stats.interval(values, "bootstrap", seed=seed, samples=samples)
                assert math.isfinite(low) and math.isfinite(high), (values, seed, samples)
                assert 0.0 <= low <= m <= high <= 1.0
                assert low <= m * (1 - u) + 1e-12 and high >= m + (1 - m) * u - 1e-12
        batched = stats.intervals(samples_list, "bootstrap", [7] * len(samples_list), 1000)
    assert batched == [stats.interval(v, "bootstrap", 7, 1000) for v in samples_list]


def test_paired_deltas_of_two_questions_are_finite():
    low, high = stats.paired_bootstrap_delta([0.2, 0.4], [0.4, 0.4], seed=0)
    assert math.isfinite(low) and math.isfinite(high) and low <= 0.1 <= high
