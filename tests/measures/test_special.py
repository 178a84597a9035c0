"""assay.measures.special, what computes the interval quantiles where scipy is not installed, against scipy.special
(the functions) and against the intervals computed with scipy (what a user sees)."""

import math

import numpy as np
import pytest
import scipy.special as sp

from assay.measures import special, stats


def test_the_normal_quantile_is_scipys():
    p = np.concatenate([np.arange(1, 2000) / 2000, [1e-300, 1e-20, 1e-10, 0.025, 0.975, 1 - 1e-16]])
    got, want = special.ndtri(p), sp.ndtri(p)
    assert np.allclose(got, want, rtol=5e-14, atol=1e-15)
    assert special.ndtri(0.0) == -math.inf and special.ndtri(1.0) == math.inf and special.ndtri(0.5) == 0.0
    assert math.isnan(special.ndtri(1.5))
    assert isinstance(special.ndtri(0.3), np.float64) and special.ndtri(p.reshape(-1, 5)).shape == (401, 5)


def test_the_normal_cdf_is_scipys():
    x = np.linspace(-8, 8, 20001)
    assert np.allclose(special.ndtr(x), sp.ndtr(x), rtol=2e-14, atol=0)
    assert special.ndtr(-math.inf) == 0.0 and special.ndtr(math.inf) == 1.0 and special.ndtr(0.0) == 0.5


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 29, 55, 100, 999, 1000, 5000, 10000])
def test_the_t_quantile_is_scipys(df):
    for p in (0.5, 0.6, 0.9, 0.975, 0.995, 0.025, 1e-6):
        assert special.stdtrit(df, p) == pytest.approx(float(sp.stdtrit(df, p)), rel=5e-14, abs=1e-15)
    assert special.stdtrit(1, 0.975) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-15)  # Cauchy: closed form


def test_intervals_without_scipy_are_scipys_to_5e_15(monkeypatch):
    """The bounds a report shows, computed both ways over graded values of many sizes and shapes."""
    rng = np.random.default_rng(1)
    cases = []
    for n in (2, 3, 5, 8, 10, 20, 30, 56, 100, 300, 1000):
        for k in range(4):
            values = rng.random(n) ** rng.uniform(0.3, 4)
            cases.append(np.round(values, int(rng.integers(1, 4))) if k % 2 else values)
    # degenerate samples (issue 25): two values, n = 2 (the BCa level ~1e-72), a ceiling but for one
    cases += [np.array([0.2, 0.4]), np.array([0.0, 1.0]), np.array([0.9, 1.0, 1.0]), np.array([0.3, 0.7, 0.3, 0.7])]
    with_scipy = [stats.bootstrap_mean(v, seed=7) for v in cases]
    monkeypatch.setattr(stats, "_normal_and_t", lambda: (special.ndtr, special.ndtri, special.stdtrit))
    without = [stats.bootstrap_mean(v, seed=7) for v in cases]
    assert np.all(np.isfinite(with_scipy)) and np.all(np.isfinite(without))  # a NaN would make the max below pass
    worst = max(abs(a - b) for pair in zip(with_scipy, without) for a, b in zip(*pair))
    assert worst <= 5e-15
    assert with_scipy != without  # not bit for bit: the check above is what holds them together
