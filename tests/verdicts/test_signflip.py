"""The sign-flip test of a mean (assay.verdicts.signflip), which the gate's one-sample test of a graded measure
reads: p-values and bounds against a brute-force enumeration of all 2**n sign flips, written here from the
definition (flip the sign of d_i - delta on a subset; the p-value is the share of patterns at least as extreme as
the observed one).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from assay.verdicts.signflip import EXACT_CELLS, null_distribution


def brute_force(d, delta):
    """(p_greater, p_less) over all 2**n sign patterns of d - delta, straight from the definition: the sum with
    signs s against the observed sum (all +1)."""
    shifted = [x - delta for x in d]
    observed = sum(shifted)
    greater = less = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum(si * x for si, x in zip(signs, shifted))
        greater += s >= observed - 1e-12
        less += s <= observed + 1e-12
    return greater / 2 ** len(d), less / 2 ** len(d)


@pytest.mark.parametrize("n, seed", [(n, s) for n in (1, 2, 3, 5, 8, 10) for s in range(4)])
def test_one_sided_p_values_match_the_brute_force_enumeration(n, seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.random(n) - 0.4, 2)  # rounded: ties among the changes
    dist = null_distribution(d, seed=0)
    assert dist.patterns == "exact"
    for delta in (0.0, -0.05, 0.1, float(d.mean()), float(d[0])):
        greater, less = brute_force(d, delta)
        assert dist.p_greater(delta) == pytest.approx(greater, abs=1e-12)
        assert dist.p_less(delta) == pytest.approx(less, abs=1e-12)


def test_the_bounds_read_the_cumulative_weights_at_their_edges():
    """lower(a) = min{delta : p_greater(delta) >= a} and upper(a) = max{delta : p_less(delta) >= a}, from the brute
    force at every subset mean, for every level a the weights reach exactly (k / 32 at n = 5): a level equal to a
    cumulative weight qualifies; at a = 1/32 the observed pattern alone reaches it, so every delta qualifies
    (-inf, +inf); above 1 none does (+inf, -inf)."""
    d = [0.5, 0.25, 0.25, -0.125, 1.0]
    null = null_distribution(np.array(d), seed=0)
    means = sorted({sum(s) / len(s) for r in range(1, 6) for s in itertools.combinations(d, r)})
    p = {t: brute_force(d, t) for t in means}
    for k in range(0, 34):
        a = k / 32
        lows = [t for t in means if p[t][0] >= a - 1e-12]
        highs = [t for t in means if p[t][1] >= a - 1e-12]
        want_low = -math.inf if a <= 1 / 32 else (min(lows) if lows else math.inf)
        want_high = math.inf if a <= 1 / 32 else (max(highs) if highs else -math.inf)
        assert null.lower(a) == pytest.approx(want_low, abs=1e-12), a
        assert null.upper(a) == pytest.approx(want_high, abs=1e-12), a


@pytest.mark.parametrize("seed", range(3))
def test_a_large_table_is_sampled_with_its_seed(seed):
    rng = np.random.default_rng(seed)
    d = rng.random(200) - 0.5
    sampled = null_distribution(d, 7, samples=2000)
    assert sampled.patterns == 2000
    again, other = null_distribution(d, 7, samples=2000), null_distribution(d, 8, samples=2000)
    assert np.array_equal(sampled.t, again.t) and not np.array_equal(sampled.t, other.t)
    # 16 distinct values are 2**16 cells: enumerated; 17 are sampled
    assert null_distribution(rng.random(16), 0).patterns == "exact" and 2 ** 16 <= EXACT_CELLS
    assert null_distribution(rng.random(17), 0, samples=100).patterns == 100
