"""Fisher's randomization test at its boundaries: a sign pattern whose statistic equals the threshold exactly,
the rounding margin of the batched statistics, the memory bound on the sign draws, the defaults, and the input
checks (assay.verdicts.significance). Written against the survivors of the mutmut run of 2026-12-01."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from assay.verdicts import significance


def _threshold(d) -> float:
    """The documented threshold: the observed statistic |mean(d)| less tol = 1e-12 * mean(|d|)."""
    return abs(float(d.mean())) - 1e-12 * float(np.abs(d).mean())


def _tie(n: int) -> np.ndarray:
    """d = (1, b, 0, ..., 0) of length n with b chosen so that the patterns giving 1 and b opposite signs reach
    a statistic |1 - b| / n exactly equal (in floating point) to the threshold."""
    for b in np.linspace(4.99e-13, 5.01e-13, 2001):
        d = np.zeros(n)
        d[0], d[1] = 1.0, b
        signs = np.ones(n)
        signs[1] = -1.0
        if abs(float(signs @ d)) / n == _threshold(d):
            return d
    raise AssertionError("no exact tie found")  # pragma: no cover - the search above finds dozens


def test_a_pattern_exactly_at_the_threshold_counts_in_the_exact_test():
    """Kills x__exact_p__mutmut_24 (>= -> >): n = 2, two of the four patterns reach the observed statistic and the
    other two land exactly on the threshold; the documented rule T(s) >= observed - tol counts all four."""
    d = _tie(2)
    assert significance._exact_p(d) == 1.0
    assert significance.fisher_randomization(np.zeros(2), d, seed=0) == 1.0


def test_a_pattern_exactly_at_the_threshold_counts_when_sampled():
    """Kills x__sampled_counts__mutmut_73 (the recount's >= -> >): n = 17 is sampled; every drawn pattern either
    reaches the observed statistic or lands exactly on the threshold, so every one counts and p = 1."""
    d = _tie(17)
    assert significance.fisher_randomization(np.zeros(17), d, seed=5, samples=300) == 1.0
    # and next to an ordinary pair of runs in one batch (the matrix product holds two columns)
    other = np.linspace(-0.3, 0.5, 17)
    many = significance.fisher_randomization_many([(np.zeros(17), d), (np.zeros(17), other)], seed=5, samples=300)
    assert many[0] == 1.0
    assert many[1] == significance.fisher_randomization(np.zeros(17), other, seed=5, samples=300)


def test_the_margin_is_twice_the_two_orders_bound():
    """Kills x__margin__mutmut_3..14, 17..28: _margin(d) = 2 * 2 * (gamma * sum|d| / n + 2 u mean|d|) with
    u = 2**-53 and gamma = (n - 1) u / (1 - (n - 1) u), computed here exactly (n = 10**6, so a change of the
    constant or of n - 1 moves it by far more than the 1e-14 allowed)."""
    n = 10 ** 6
    d = np.full(n, 0.5)
    d[::2] = -0.5
    u = Fraction(1, 2 ** 53)
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    abs_sum = Fraction(n, 2)
    expected = 4 * (gamma * abs_sum / n + 2 * u * (abs_sum / n))
    assert significance._margin(d) == pytest.approx(float(expected), rel=1e-14, abs=0)
    # a second shape: unequal values, n = 3
    d = np.array([0.25, -1.0, 3.0])
    gamma = 2 * u / (1 - 2 * u)
    abs_sum = Fraction(17, 4)
    expected = 4 * (gamma * abs_sum / 3 + 2 * u * abs_sum / 3)
    assert significance._margin(d) == pytest.approx(float(expected), rel=1e-14, abs=0)


def test_sign_draws_hold_one_pattern_at_a_time_when_one_is_over_the_bound(monkeypatch):
    """Kills x__sampled_counts__mutmut_18 (max(1, ...) -> max(2, ...)): at most _CHUNK_ELEMENTS signs are drawn at
    once, and when one pattern alone is more (n > _CHUNK_ELEMENTS) one pattern at a time. The bound is lowered to
    8 so that 17 questions are over it."""
    shapes = []
    real = np.random.default_rng

    class Recording:
        def __init__(self, seed):
            self.rng = real(seed)

        def integers(self, *args, size=None, **kwargs):
            shapes.append(size)
            return self.rng.integers(*args, size=size, **kwargs)

    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", 8)
    monkeypatch.setattr(np.random, "default_rng", Recording)
    p = significance.fisher_randomization(np.zeros(17), np.linspace(-1.0, 2.0, 17), seed=3, samples=5)
    assert shapes == [(1, 17)] * 5
    assert 0 < p <= 1
    shapes.clear()
    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", 40)  # two patterns of 17 fit, three do not
    significance.fisher_randomization(np.zeros(17), np.linspace(-1.0, 2.0, 17), seed=3, samples=5)
    assert shapes == [(2, 17), (2, 17), (1, 17)]


def test_the_default_sample_count_of_the_batched_test_is_10000():
    """Kills x_fisher_randomization_many__mutmut_1 (default 10000 -> 10001)."""
    before = np.linspace(0.0, 1.0, 30)
    after = before + np.sin(np.arange(30.0)) * 0.2 + 0.05
    explicit = significance.fisher_randomization_many([(before, after)], seed=11, samples=10000)
    assert significance.fisher_randomization_many([(before, after)], seed=11) == explicit
    assert explicit != significance.fisher_randomization_many([(before, after)], seed=11, samples=10001)


def test_values_read_as_decimals_are_numbers():
    """Kills x__paired_arrays__mutmut_3, 5, 8, 10 (dtype=float dropped): per-question values as a DuckDB DECIMAL
    column gives them (Python Decimal objects) are the same floats; without the conversion numpy keeps them as
    objects and float - Decimal fails. Booleans (hit or miss) are 1.0 and 0.0."""
    before = [0.25, 0.5, 1.0, 0.0, 0.75] * 4
    after = [0.5, 0.5, 0.75, 0.25, 1.0] * 4
    as_floats = significance.fisher_randomization(before, after, seed=2)
    decimals = [Decimal(str(v)) for v in before], [Decimal(str(v)) for v in after]
    assert significance.fisher_randomization(decimals[0], after, seed=2) == as_floats
    assert significance.fisher_randomization(before, decimals[1], seed=2) == as_floats
    assert significance.fisher_randomization(*decimals, seed=2) == as_floats
    hits, misses = [True, False, True, True, False] * 4, [True, True, True, False, True] * 4
    assert significance.fisher_randomization(hits, misses, seed=2) == significance.fisher_randomization(
        [float(v) for v in hits], [float(v) for v in misses], seed=2)


@pytest.mark.parametrize("before, after", [
    ([[0.1, 0.2], [0.3, 0.4]], [0.1, 0.2, 0.3, 0.4]),
    ([0.1, 0.2, 0.3, 0.4], [[0.1, 0.2], [0.3, 0.4]]),
    ([[0.1, 0.2]], [[0.3, 0.4]]),
])
def test_values_that_are_not_flat_are_refused(before, after):
    """Kills x__paired_arrays__mutmut_11 (or -> and) and _17 (the message)."""
    with pytest.raises(ValueError, match=r"^before and after must be flat sequences of per-question values$"):
        significance.fisher_randomization(before, after, seed=0)


def test_no_questions_and_non_finite_values_are_refused_with_their_messages():
    """Kills x__paired_arrays__mutmut_24 and x_fisher_randomization_many__mutmut_14 (the messages)."""
    with pytest.raises(ValueError, match=r"^no observations$"):
        significance.fisher_randomization([], [], seed=0)
    with pytest.raises(ValueError, match=r"^before and after must be finite numbers$"):
        significance.fisher_randomization([0.1, float("nan")], [0.2, 0.3], seed=0)
