"""wilson() computes in plain floats (a report or gate of 0/1 measures then loads no numpy): its bounds must be
the array computation's, bit for bit, for whole and fractional counts, every n a report meets and the edges."""

import numpy as np

from assay.measures.stats import Z95, _wilson, wilson


def test_plain_float_bounds_equal_the_array_computation_bit_for_bit():
    rng = np.random.default_rng(7)
    checked = 0
    for n in [1, 2, 3, 5, 10, 15, 56, 71, 100, 999, 1000, 12345]:
        counts = np.concatenate([np.arange(n + 1, dtype=float), rng.uniform(0, n, 200), [0.25, n - 0.25, 0.5, n - 0.5]])
        for continuity in (True, False):
            low, high = _wilson(counts, n, Z95, continuity)
            for k, lo, hi in zip(counts, low, high):
                got = wilson(float(k), n, continuity=continuity)
                assert got == (float(lo), float(hi)), (k, n, continuity)
                assert all(type(b) is float for b in got)
                checked += 1
    assert checked > 10000


def test_a_mean_of_graded_values_as_the_count():
    values = [0.1, 0.7, 1.0, 0.0, 0.35]
    low, high = _wilson(np.asarray(sum(values)), len(values), Z95)
    assert wilson(sum(values), len(values)) == (float(low), float(high))


def test_the_default_rule_is_the_array_computation_of_its_choice_bit_for_bit():
    """wilson(k, n) without ``continuity``: corrected below 25 observations, plain from 25 on (stats.PLAIN_FROM), each
    bound the array computation's of that choice, bit for bit."""
    for n in range(1, 60):
        counts = np.arange(2 * n + 1, dtype=float) / 2
        low, high = _wilson(counts, n, Z95, n < 25)
        assert [wilson(k, n) for k in counts] == [(float(lo), float(hi)) for lo, hi in zip(low, high)], n
