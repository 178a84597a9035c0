"""One paired inference per comparison (assay.metrics.inference): the interval and the p-value come from one
sign-flip test, so the interval excludes the null exactly when p < alpha, on any paired data.

The references are independent of the code under test: scipy.stats.binomtest for the exact sign test (McNemar)
of 0/1 outcomes, and a brute-force enumeration of all 2**n sign flips, written here from the definition (flip the
sign of d_i - delta on a subset; the p-value is the share of patterns at least as extreme as the observed one).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from assay.metrics.inference import EXACT_CELLS, infer, null_distribution


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


def sign_test_p(before, after):
    """McNemar's exact test through scipy: won ~ Binomial(won + lost, 1/2)."""
    won = sum(1 for a, b in zip(before, after) if (a, b) == (0, 1))
    lost = sum(1 for a, b in zip(before, after) if (a, b) == (1, 0))
    return binomtest(won, won + lost, 0.5).pvalue if won + lost else 1.0


@pytest.mark.parametrize("seed", range(12))
def test_two_sided_p_of_0_1_outcomes_is_mcnemars_exact_test(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    before, after = rng.integers(0, 2, n), rng.integers(0, 2, n)
    result = infer(before, after)
    assert result.p_value == pytest.approx(sign_test_p(before, after), rel=1e-9, abs=1e-15)
    assert result.method == "mcnemar-exact" and result.patterns == "exact"


def test_the_issue_case_an_interval_excluding_zero_means_p_below_alpha():
    """Success@10 0.893 -> 0.804 over 56 questions: 5 lost, 0 won. McNemar's p is 2/32 = 0.0625, so the 95%
    interval must include 0 (the bootstrap's [-0.196, -0.002] did not)."""
    before = [1] * 50 + [0] * 6
    after = [1] * 45 + [0] * 5 + [0] * 6
    result = infer(before, after)
    assert result.p_value == pytest.approx(0.0625)
    assert result.low < 0 <= result.high
    assert result.change == pytest.approx(-5 / 56)


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


@pytest.mark.parametrize("seed", range(5))
def test_the_interval_is_the_set_of_shifts_the_brute_force_test_does_not_reject(seed):
    """Every endpoint is a subset mean; just inside it the enumerated test accepts, just outside it rejects."""
    rng = np.random.default_rng(seed)
    d = np.round(rng.random(9) - 0.3, 3)
    r = infer(np.zeros(9), d, alpha=0.1, bounds=(-10, 10))
    eps = 1e-9
    for delta, accepted in ((r.low, True), (r.high, True), (r.low - eps, False), (r.high + eps, False)):
        greater, less = brute_force(d, delta)
        assert (min(1.0, 2 * min(greater, less)) >= 0.1) == accepted, (delta, greater, less)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_interval_excludes_the_null_exactly_when_p_is_below_alpha(data):
    """The equivalence, on arbitrary paired data: 0/1 or graded, n from 1 to 300, ties, all equal; exact and
    sampled; two-sided and one-sided (regress's significance mode); any alpha and null."""
    n = data.draw(st.integers(1, 300), label="n")
    kind = data.draw(st.sampled_from(["binary", "graded", "coarse", "equal"]), label="kind")
    if kind == "binary":
        values = st.integers(0, 1).map(float)
    elif kind == "coarse":
        values = st.sampled_from([0.0, 0.25, 0.5, 1.0])
    else:
        values = st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False)
    before = data.draw(st.lists(values, min_size=n, max_size=n), label="before")
    after = list(before) if kind == "equal" else data.draw(st.lists(values, min_size=n, max_size=n), label="after")
    alpha = data.draw(st.sampled_from([0.05, 0.01, 0.1, 0.5, 0.05 / 12, 0.2]), label="alpha")
    null = data.draw(st.sampled_from([0.0, -0.02, -0.1, 0.05]), label="null")
    two = infer(before, after, alpha=alpha, seed=3, samples=500, null=null)
    assert (not two.low <= null <= two.high) == (two.p_value < alpha)
    assert two.low <= two.high and -1 <= two.low and two.high <= 1
    assert all(math.isfinite(x) for x in (two.low, two.high, two.p_value))
    one = infer(before, after, alpha=alpha, seed=3, samples=500, null=null, alternative="less")
    assert (one.high < null) == (one.p_value < alpha)
    assert one.low == -1.0
    # the same seed, the same answer
    assert infer(before, after, alpha=alpha, seed=3, samples=500, null=null) == two


def test_all_equal_pairs_give_p_1_and_a_point_interval_at_zero():
    r = infer([0.3, 0.7, 0.1] * 10, [0.3, 0.7, 0.1] * 10)
    assert (r.p_value, r.low, r.high, r.change) == (1.0, 0.0, 0.0, 0.0)


def test_one_question_says_nothing_but_stays_finite():
    r = infer([0.2], [0.9])
    assert (r.p_value, r.low, r.high) == (1.0, -1.0, 1.0)


def test_a_large_graded_comparison_is_sampled_with_its_seed():
    rng = np.random.default_rng(0)
    before, after = rng.random(200), rng.random(200)
    r = infer(before, after, seed=7, samples=2000)
    assert r.patterns == 2000 and r.method == "sign-flip"
    assert infer(before, after, seed=7, samples=2000) == r
    assert infer(before, after, seed=8, samples=2000).p_value != r.p_value
    # 20 distinct changes would be 2**20 cells: sampled; 16 are enumerated
    assert null_distribution(rng.random(16), 0).patterns == "exact" and 2 ** 16 <= EXACT_CELLS
    assert null_distribution(rng.random(17), 0, samples=100).patterns == 100


def test_one_sided_p_against_a_hand_computed_case():
    """Changes -0.5, -0.5, -0.5 (n = 3), H0 change >= -0.1: only the empty flip set has a sum of
    (d_i + 0.1) = -0.4 each that is <= the observed, so p = P(sum_S (d_i + 0.1) >= 0) = 1/8."""
    r = infer([0.5] * 3, [0.0] * 3, alternative="less", null=-0.1, alpha=0.2)
    assert r.p_value == pytest.approx(1 / 8)
    assert r.high < -0.1
    assert infer([0.5] * 3, [0.0] * 3, alternative="less", null=-0.1, alpha=0.125).high >= -0.1


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


def test_outcomes_given_as_booleans_are_0_1_values():
    # two won, none lost: change 2/4, McNemar's exact p = 2 * (1/2)**2
    got = infer([True, False, True, False], [True, True, True, True], seed=0)
    assert (got.n, got.change, got.p_value, got.method) == (4, 0.5, 0.5, "mcnemar-exact")
    assert got == infer([1, 0, 1, 0], [1, 1, 1, 1], seed=0)


def test_values_read_from_sql_as_decimals_are_numbers():
    # DuckDB gives a DECIMAL column as Decimal: the same inference as on the floats, on either side alone too
    from decimal import Decimal

    before, after = [0.25, 0.5, 0.75, 0.5], [0.5, 0.75, 0.75, 1.0]
    want = infer(before, after, seed=0)
    assert want.change == 0.25  # changes 0.25, 0.25, 0, 0.5
    assert infer([Decimal(str(v)) for v in before], after, seed=0) == want
    assert infer(before, [Decimal(str(v)) for v in after], seed=0) == want


@pytest.mark.parametrize("before, after, message", [
    ([0.1, 0.2], [0.1], "before and after must be flat sequences of the same length, paired question by question"),
    ([0.1, 0.2], [[0.1, 0.2]], "before and after must be flat sequences of the same length, paired question by question"),
    ([[0.1, 0.2]], [0.1, 0.2], "before and after must be flat sequences of the same length, paired question by question"),
    ([], [], "no observations"),
    ([0.1, math.nan], [0.1, 0.2], "before and after must be finite numbers"),
    ([0.1, 0.2], [math.inf, 0.2], "before and after must be finite numbers"),
])
def test_unpaired_empty_or_non_finite_values_are_refused_saying_why(before, after, message):
    with pytest.raises(ValueError) as refused:
        infer(before, after, seed=0)
    assert str(refused.value) == message


def test_the_method_is_mcnemar_only_for_0_1_changes_enumerated_exactly():
    assert infer([0, 1, 1, 0], [1, 1, 0, 1], seed=0).method == "mcnemar-exact"
    graded = infer([0.25, 0.5, 0.75], [0.5, 0.5, 1.0], seed=0)
    assert (graded.method, graded.patterns) == ("sign-flip", "exact")


def test_alpha_lies_in_the_half_open_unit_interval():
    for alpha in (0.0, -0.1, 1.5, 2.0):
        with pytest.raises(ValueError) as refused:
            infer([0.1, 0.2], [0.3, 0.4], alpha=alpha, seed=0)
        assert str(refused.value) == f"alpha must lie in (0, 1], got {alpha!r}"
    assert infer([0.1, 0.2], [0.3, 0.4], alpha=1.0, seed=0).alpha == 1.0


def test_the_default_seed_is_0():
    rng = np.random.default_rng(3)
    before, after = rng.random(40), rng.random(40)  # 40 distinct changes: sampled, not enumerated
    sampled = infer(before, after)
    assert sampled.patterns == 10000 and sampled == infer(before, after, seed=0)
    assert sampled.p_value != infer(before, after, seed=1).p_value
