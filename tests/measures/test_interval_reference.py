"""The intervals of assay.measures.stats held to computations that share nothing with it but the random draws:

- Wilson's bounds are the roots of its defining equation (p - pi)^2 = z^2 pi (1 - pi) / n, found by scipy's brentq
  (with the continuity correction, at p -+ 1/2n), not its closed form;
- the bootstrap interval (expanded BCa, bootstrap-t, the edge widening and the worst-case clip, as bootstrap_mean's
  docstring defines them) is recomputed resample by resample in plain Python: each resample's values taken by
  index from the draws numpy's PCG64 gives for the seed (the code multiplies a matrix of counts instead), sums by
  math.fsum, quantiles interpolated by hand, scipy.stats' norm and t for the levels (the code calls scipy.special's
  ufuncs or its own), Newcombe's printed formula for Wilson.

tests/measures/reference_stats.py (the code before its speed work, kept to hold the faster code to the very floats)
is a copy of the code; these are not.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm, t

from assay.measures import stats
from test_degenerate_intervals import wilson_cc

Z = 1.959963984540054


def wilson_roots(successes: float, n: int, shift: float) -> tuple[float, float]:
    """The roots below and above p of (p' - pi)^2 - z^2 pi (1 - pi) / n, at p' = p - shift/n and p + shift/n; 0 and
    1 where p' falls outside (0, 1)."""
    def f(pi, p):
        return (p - pi) ** 2 - Z * Z * pi * (1 - pi) / n

    lo_p, hi_p = (successes - shift) / n, (successes + shift) / n
    # p itself is a root where p is 0 or 1 (pi (1 - pi) vanishes): each bracket starts 1e-9 inside it (the root
    # sought lies at least z sqrt(p (1 - p) / n) + z^2 / 2n away, far more for these n)
    low = brentq(f, 0.0, lo_p - 1e-9, args=(lo_p,), xtol=1e-15, rtol=1e-15) if lo_p > 0 else 0.0
    high = brentq(f, hi_p + 1e-9, 1.0, args=(hi_p,), xtol=1e-15, rtol=1e-15) if hi_p < 1 else 1.0
    return low, high


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 56, 300])
@pytest.mark.parametrize("continuity", [True, False])
def test_wilson_bounds_are_the_roots_of_its_equation(n, continuity):
    for k in sorted({0, 0.3, 0.5, 1, n / 3, n / 2, n - 1, n - 0.5, n, *range(0, n + 1, max(1, n // 7))}):
        if not 0 <= k <= n:
            continue
        want = wilson_roots(k, n, 0.5 if continuity else 0.0)
        assert stats.wilson(k, n, continuity=continuity) == pytest.approx(want, abs=1e-12), (k, n)


def quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between the order statistics at q (n - 1): numpy's default, written out."""
    pos = q * (len(ordered) - 1)
    below = min(max(math.floor(pos), 0), len(ordered) - 1)
    above = min(below + 1, len(ordered) - 1)
    frac = pos - below
    return ordered[below] * (1 - frac) + ordered[above] * frac


def reference_interval(values, seed: int, samples: int, alpha: float = 0.05,
                       paired: bool = False) -> tuple[float, float]:
    x = [float(v) for v in values]
    n = len(x)
    mean = math.fsum(x) / n
    u = wilson_cc(0, n)[1]
    if n == 1 or len(set(x)) == 1:
        return (mean * (1 - u), mean + (1 - mean) * u)
    # a sample with spread is widened by the share 2 / (n + 2) of unseen questions; paired deltas keep the 95% bound
    s = u if paired else 2 / (n + 2)
    edge = (mean * (1 - s), mean + (1 - mean) * s)
    worst = wilson_cc(math.fsum(x), n)
    draws = np.random.default_rng(seed).integers(0, n, size=(samples, n)).tolist()
    means, variances = [], []
    for row in draws:
        resample = [x[i] for i in row]
        m = math.fsum(resample) / n
        means.append(m)
        variances.append(math.fsum((r - m) ** 2 for r in resample) / (n - 1))
    shift = [m - mean for m in means]
    tied = [abs(s) <= 1e-12 for s in shift]

    # expanded BCa: bias from the share of resampled means below the mean (ties half), acceleration from the
    # jackknife of the mean, levels at alpha'/2 = Phi(-sqrt(n/(n-1)) t_{n-1, 1-alpha/2})
    below = sum(1 for s, tie in zip(shift, tied) if s < 0 and not tie) + 0.5 * sum(tied)
    z0 = norm.ppf(min(max(below / samples, 0.5 / samples), 1 - 0.5 / samples))
    dev = [v - mean for v in x]
    accel = math.fsum(d ** 3 for d in dev) / (6 * math.fsum(d * d for d in dev) ** 1.5)
    half_alpha = norm.cdf(-math.sqrt(n / (n - 1)) * t.ppf(1 - alpha / 2, n - 1))

    def level(zq, degenerate):
        w = z0 + zq
        return norm.cdf(z0 + w / (1 - accel * w)) if 1 - accel * w > 0 else degenerate

    ordered = sorted(means)
    bca = (quantile(ordered, level(norm.ppf(half_alpha), 0.0)), quantile(ordered, level(-norm.ppf(half_alpha), 1.0)))

    # bootstrap-t; a resample with no spread is studentized by its Wilson interval's width / 2z
    se = math.sqrt(math.fsum(d * d for d in dev) / (n - 1) / n)
    pivots = []
    for m, var, s, tie in zip(means, variances, shift, tied):
        if var > 1e-12:
            boot_se = math.sqrt(var / n)
        else:
            lo, hi = wilson_cc(m * n, n)
            boot_se = (hi - lo) / (2 * Z)
        pivots.append((0.0 if tie else s) / boot_se)
    pivots.sort()
    t_low = max(mean - quantile(pivots, 1 - alpha / 2) * se, worst[0])
    t_high = min(mean - quantile(pivots, alpha / 2) * se, worst[1])
    low = min(max(min(bca[0], t_low, edge[0]), 0.0), mean)
    high = min(max(max(bca[1], t_high, edge[1]), mean), 1.0)
    return low, high


def samples_of_values():
    rng = np.random.default_rng(2026)
    for n in (3, 5, 16, 17, 40, 56, 211):
        yield n, "uniform", rng.random(n)
        yield n, "grid of fifths", rng.integers(0, 6, n) / 5
        yield n, "mostly zero", np.where(rng.random(n) < 0.85, 0.0, rng.random(n))
        yield n, "reciprocal ranks", 1 / rng.integers(1, 11, n)
        yield n, "near the ceiling", np.where(rng.random(n) < 0.9, 1.0, rng.random(n))


@pytest.mark.parametrize("seed, samples", [(0, 1000), (7, 200)])
def test_bootstrap_interval_is_the_one_its_definition_gives(seed, samples):
    checked = 0
    for n, kind, values in samples_of_values():
        if len(set(values.tolist())) == 1:
            continue
        want = reference_interval(values, seed, samples)
        got = stats.bootstrap_mean(values, seed=seed, samples=samples)
        assert got == pytest.approx(want, abs=1e-9), (n, kind)
        assert all(math.isfinite(b) for b in got) and got[0] <= values.mean() <= got[1]
        checked += 1
    assert checked >= 30


def test_paired_delta_interval_is_the_bootstrap_of_the_mapped_deltas():
    rng = np.random.default_rng(11)
    for n in (4, 30, 120):
        before = rng.random(n)
        after = np.clip(before + rng.normal(0.05, 0.2, n), 0, 1)
        low, high = reference_interval((after - before + 1) / 2, 3, 1000, paired=True)
        assert stats.paired_bootstrap_delta(before, after, seed=3) == pytest.approx((2 * low - 1, 2 * high - 1),
                                                                                   abs=2e-9), n
