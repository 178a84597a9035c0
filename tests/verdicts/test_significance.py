"""Paired significance tests, each checked against an independent reference.

References: scipy.stats (binomtest, permutation_test) and brute-force
enumerations written here in exact (Fraction) arithmetic.
"""

import itertools
import random
from fractions import Fraction
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats as sps

from assay.verdicts import significance
from assay.verdicts.significance import (
    EXACT_MAX_N,
    KINDS,
    fisher_randomization,
    holm,
    mcnemar_exact,
    paired_test,
)
from assay.verdicts.significance import paired_tests_many


def _outcomes(lost: int, won: int, both: int = 0, neither: int = 0, seed: int = 0):
    """Shuffled 0/1 before/after lists with the given counts of each pairing."""
    pairs = [(1, 0)] * lost + [(0, 1)] * won + [(1, 1)] * both + [(0, 0)] * neither
    random.Random(seed).shuffle(pairs)
    return [p[0] for p in pairs], [p[1] for p in pairs]


# --- McNemar exact --------------------------------------------------------------------------


@pytest.mark.parametrize("lost, won, both, neither, expected", [
    (0, 5, 3, 2, 0.0625),      # 2 * (1/2)**5
    (5, 0, 0, 0, 0.0625),
    (4, 4, 1, 1, 1.0),         # b == c
    (7, 7, 0, 0, 1.0),
    (0, 0, 6, 4, 1.0),         # no discordant pair
    (1, 9, 0, 0, 0.021484375), # 2 * (1 + 10) / 1024
])
def test_mcnemar_hand_values(lost, won, both, neither, expected):
    before, after = _outcomes(lost, won, both, neither)
    result = mcnemar_exact(before, after)
    assert result == {"b": lost, "c": won, "p_value": pytest.approx(expected, abs=1e-15)}


def test_mcnemar_matches_scipy_binomtest_on_random_cases():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 80))
        before = rng.integers(0, 2, size=n)
        after = np.where(rng.random(n) < rng.random(), before, 1 - before)
        result = mcnemar_exact(before.tolist(), after.tolist())
        b = int(np.sum((before == 1) & (after == 0)))
        c = int(np.sum((before == 0) & (after == 1)))
        assert (result["b"], result["c"]) == (b, c)
        expected = 1.0 if b + c == 0 else sps.binomtest(min(b, c), b + c, 0.5).pvalue
        assert result["p_value"] == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("lost, won", [(1000, 1100), (2500, 2650), (3000, 3000), (40, 4000)])
def test_mcnemar_large_counts_do_not_overflow(lost, won):
    before, after = _outcomes(lost, won, both=200, neither=300)
    p = mcnemar_exact(before, after)["p_value"]
    expected = sps.binomtest(min(lost, won), lost + won, 0.5).pvalue
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_accepts_bools_and_float_outcomes():
    before, after = _outcomes(2, 6, both=3, neither=1)
    expected = mcnemar_exact(before, after)
    assert mcnemar_exact([bool(x) for x in before], [bool(x) for x in after]) == expected
    assert mcnemar_exact([float(x) for x in before], np.array(after, dtype=float)) == expected


@pytest.mark.parametrize("before, after, message", [
    ([0, 1, 0.5], [1, 1, 0], r"before must hold 0/1 .* index 2 has 0\.5"),
    ([0, 1, 1], [1, 2, 0], r"after must hold 0/1 .* index 1 has 2\.0"),
    ([0, 1, 1], [1, float("nan"), 0], r"after must hold 0/1 .* index 1"),
    ([0, 1, 1], [1, 0], r"before has 3 values but after has 2"),
    ([], [], r"no observations"),
])
def test_mcnemar_rejects_bad_input(before, after, message):
    with pytest.raises(ValueError, match=message):
        mcnemar_exact(before, after)


# --- Fisher randomization -------------------------------------------------------------------


def _exact_reference(diffs: list[str]) -> Fraction:
    """Exact randomization p-value by enumeration, in decimal-exact Fraction arithmetic."""
    d = [Fraction(x) for x in diffs]
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d))) >= observed
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return Fraction(hits, 2 ** len(d))


def test_fisher_exact_hand_value():
    # |mean| over the 8 sign patterns of [1, 2, 3]: 2, 4/3, 2/3, 0 (each twice); only +-(1,2,3) reach 2.
    assert fisher_randomization([0, 0, 0], [1, 2, 3], seed=0) == 0.25
    assert fisher_randomization([1, 2, 3], [0, 0, 0], seed=0) == 0.25
    assert fisher_randomization([0.5, 0.5, 0.5], [1.5, 2.5, 3.5], seed=0) == 0.25


def test_fisher_exact_matches_fraction_enumeration_with_ties():
    # Decimal values whose sign-flipped sums tie the observed one exactly (0.1 + 0.2 - 0.3 = 0),
    # which binary floating point misses unless the comparison tolerates rounding.
    cases = [["0.1", "0.2", "-0.3", "0.5"], ["0.3", "-0.1", "-0.2", "0.7", "0.6", "-0.6"]]
    rng = random.Random(3)
    pool = ["-0.3", "-0.2", "-0.1", "0.1", "0.2", "0.3", "0.4", "0.7"]
    cases += [[rng.choice(pool) for _ in range(rng.randint(2, 9))] for _ in range(25)]
    for diffs in cases:
        after = [float(x) for x in diffs]
        p = fisher_randomization([0.0] * len(after), after, seed=0)
        assert p == float(_exact_reference(diffs)), diffs


def test_fisher_exact_is_scale_invariant():
    diffs = [0.1, 0.2, -0.3, 0.5, 0.4, -0.1]
    p = fisher_randomization([0.0] * 6, diffs, seed=0)
    for scale in (1e-14, 1e-6, 1e3, 1e8):
        assert fisher_randomization([0.0] * 6, [x * scale for x in diffs], seed=0) == p, scale


def test_fisher_exact_matches_scipy_permutation_test():
    rng = np.random.default_rng(11)
    for n in (5, 9, 12, EXACT_MAX_N):
        before = rng.random(n)
        after = np.clip(before + rng.normal(0.05, 0.2, n), 0, 1)
        expected = sps.permutation_test(
            (before, after), lambda x, y, axis: np.mean(y - x, axis=axis),
            permutation_type="samples", vectorized=True, n_resamples=2 ** n,
            alternative="two-sided",
        ).pvalue
        assert fisher_randomization(before, after, seed=0) == pytest.approx(expected, abs=1e-12)


def _sample_case(n: int, shift: float, seed: int):
    rng = np.random.default_rng(seed)
    before = rng.random(n)
    return before, np.clip(before + rng.normal(shift, 0.25, n), 0, 1)


def test_fisher_sampled_is_deterministic_per_seed():
    before, after = _sample_case(40, 0.05, seed=1)
    p = fisher_randomization(before, after, seed=42, samples=5000)
    assert fisher_randomization(before, after, seed=42, samples=5000) == p
    # the exact p of each seed, (count + 1) / (samples + 1), not merely "seeds differ"
    assert p == (2709 + 1) / 5001
    assert fisher_randomization(before, after, seed=43, samples=5000) == (2747 + 1) / 5001


def test_fisher_sampled_seeds_agree_within_monte_carlo_error():
    before, after = _sample_case(40, 0.05, seed=1)
    ps = [fisher_randomization(before, after, seed=s, samples=20000) for s in range(3)]
    assert 0.05 < min(ps)  # a case where sampling noise is visible
    assert max(ps) - min(ps) < 0.02  # ~4 standard errors of a difference at 20000 samples


def test_fisher_sampled_matches_scipy_permutation_test():
    for seed, shift in ((2, 0.04), (5, 0.08), (9, 0.0)):
        before, after = _sample_case(40, shift, seed=seed)
        expected = sps.permutation_test(
            (before, after), lambda x, y, axis: np.mean(y - x, axis=axis),
            permutation_type="samples", vectorized=True, n_resamples=20000,
            alternative="two-sided", rng=np.random.default_rng(seed),
        ).pvalue
        p = fisher_randomization(before, after, seed=seed, samples=20000)
        assert p == pytest.approx(expected, abs=0.02), (seed, shift, expected)


def test_fisher_sampled_just_above_exact_limit_matches_full_enumeration():
    n = EXACT_MAX_N + 1
    before, after = _sample_case(n, 0.1, seed=2)
    d = after - before
    patterns = np.arange(2 ** n)[:, None] >> np.arange(n) & 1
    stats = np.abs((1 - 2 * patterns) @ d) / n
    exact = np.mean(stats >= abs(d.mean()) - 1e-12)
    assert 0.02 < exact < 0.5
    assert fisher_randomization(before, after, seed=0, samples=20000) == pytest.approx(exact, abs=0.015)


def test_fisher_sampled_counts_every_sample_across_chunks(monkeypatch):
    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", 7)  # one pattern per chunk
    before, after = _sample_case(30, 0.0, seed=6)
    for samples in (1, 13, 999):
        p = fisher_randomization(before, after, seed=0, samples=samples)
        hits = p * (samples + 1)
        assert hits == pytest.approx(round(hits), abs=1e-9) and 1 <= round(hits) <= samples + 1


@pytest.mark.parametrize("n", [1, 5, 40])
def test_fisher_all_differences_zero(n):
    values = np.linspace(0, 1, n)
    assert fisher_randomization(values, values.copy(), seed=0) == 1.0


def test_fisher_clear_shift_is_significant():
    before, after = _sample_case(40, 0.3, seed=8)
    assert fisher_randomization(before, after, seed=0) < 0.01
    # Exact: every one of 10 questions improves, only the all-plus and all-minus patterns tie.
    assert fisher_randomization([0.0] * 10, [0.1 * (i + 1) for i in range(10)], seed=0) == 2 / 1024


@pytest.mark.parametrize("before, after, samples, message", [
    ([0.1, 0.2], [0.3], 100, r"before has 2 values but after has 1"),
    ([], [], 100, r"no observations"),
    ([0.1, float("nan")], [0.3, 0.4], 100, r"finite"),
    ([[0.1, 0.2]], [[0.3, 0.4]], 100, r"flat"),
    ([0.1, 0.2], [0.3, 0.4], 0, r"samples must be at least 1"),
])
def test_fisher_rejects_bad_input(before, after, samples, message):
    with pytest.raises(ValueError, match=message):
        fisher_randomization(before, after, seed=0, samples=samples)


# --- Holm-Bonferroni ------------------------------------------------------------------------


def _holm_by_procedure(p: list[float]) -> list[float]:
    """Smallest level alpha at which Holm's step-down procedure rejects each hypothesis.

    The procedure at level alpha: walk the p-values in ascending order and reject while
    p_(j) <= alpha / (m - j); stop at the first that fails. Whether a hypothesis is rejected
    can only change at alpha = (m - j) * p_(j), so those are the only levels to try.
    """
    m = len(p)
    ranked = sorted(p)
    levels = sorted({min(1.0, (m - j) * x) for j, x in enumerate(ranked)} | {1.0})

    def rejected(alpha: float) -> set[int]:
        out: set[int] = set()
        for j, i in enumerate(sorted(range(m), key=lambda i: p[i])):
            if (m - j) * p[i] > alpha:
                break
            out.add(i)
        return out

    adjusted = [1.0] * m
    for alpha in reversed(levels):
        for i in rejected(alpha):
            adjusted[i] = alpha
    return adjusted


def test_holm_hand_values():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert holm([0.5]) == [0.5]
    assert holm([0.02, 0.02]) == [0.04, 0.04]
    assert holm([0.3, 0.6, 0.01]) == pytest.approx([0.6, 0.6, 0.03], abs=1e-15)
    assert holm([0.9, 0.8]) == [1.0, 1.0]


def test_holm_matches_the_step_down_procedure():
    rng = random.Random(5)
    for _ in range(300):
        m = rng.randint(1, 12)
        pool = [rng.random() ** 3 for _ in range(m)]
        p = [rng.choice(pool) for _ in range(m)]  # draws repeat, so ties are common
        assert holm(p) == _holm_by_procedure(p), p


def test_holm_is_monotone_bounded_and_keeps_order():
    rng = random.Random(9)
    for _ in range(100):
        p = [rng.random() ** 2 for _ in range(rng.randint(1, 20))]
        adjusted = holm(p)
        assert all(x <= a <= 1.0 for x, a in zip(p, adjusted))
        by_p = [a for _, a in sorted(zip(p, adjusted))]
        assert by_p == sorted(by_p)


def test_holm_empty_and_bad_input():
    assert holm([]) == []
    for bad in ([0.1, 1.5], [-0.01], [float("nan")]):
        with pytest.raises(ValueError, match="p-values lie in"):
            holm(bad)


# --- Dispatch -------------------------------------------------------------------------------


def test_paired_test_binary():
    before, after = _outcomes(1, 9, both=5, neither=5)
    result = paired_test(before, after, kind="binary", seed=0)
    assert result == {"test": "mcnemar-exact", **mcnemar_exact(before, after)}
    assert set(result) == {"test", "p_value", "b", "c"}


def test_paired_test_continuous_exact_and_sampled():
    small = paired_test([0, 0, 0], [1, 2, 3], kind="continuous", seed=0)
    assert small == {"test": "fisher-randomization", "p_value": 0.25, "samples": "exact"}
    before, after = _sample_case(40, 0.05, seed=1)
    large = paired_test(before, after, kind="continuous", seed=3, samples=2000)
    assert large == {
        "test": "fisher-randomization",
        "p_value": fisher_randomization(before, after, seed=3, samples=2000),
        "samples": 2000,
    }


def test_paired_test_unknown_kind_names_the_kinds():
    with pytest.raises(ValueError, match=r"unknown kind 'graded'; choose one of: binary, continuous"):
        paired_test([0, 1], [1, 1], kind="graded", seed=0)
    assert set(KINDS) == {"binary", "continuous"}


# paired_tests_many's inputs: 16 graded pairs (exact: all 2**16 sign patterns), 17 (sampled), 17 hit/miss pairs


# paired_tests_many's inputs: 16 graded pairs (exact: all 2**16 sign patterns), 17 (sampled), 17 hit/miss pairs
B16, A16 = [0.0] * 16, [1, 0.5, 0, 1, 0.25, 0, 1, 0.5, 0, 0, 1, 0.2, 0, 1, 0, 0.5]


B17 = [0.5, 0, 1, 0, 0.5, 0.25, 0, 1, 0, 0, 0.5, 0, 1, 0, 0, 0.2, 0]


A17 = [1, 0.5, 0, 1, 0.25, 0, 1, 0.5, 0, 0, 1, 0.2, 0, 1, 0, 0.5, 1]


H0 = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1]


H1 = [0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1]


ITEMS = [(B16, A16, "continuous"), (B17, A17, "continuous"), (H0, H1, "binary")]


EXACT = {"test": "fisher-randomization", "p_value": 128 / 65536, "samples": "exact"}


MCNEMAR = {"test": "mcnemar-exact", "b": 6, "c": 1, "p_value": 0.125}


def test_paired_tests_many_says_how_each_p_value_was_reached():
    """paired_tests_many: up to 16 questions the randomization test is exact, above it sampled at the seed and count
    given (10000 by default); 0/1 pairs get McNemar's exact test.

    Kills, in paired_tests_many: `exact` None, of None's size, or `< EXACT_MAX_N` (x_paired_tests_many__mutmut_
    40-42: 16 questions are enumerated, 17 sampled); the 'samples' key misspelt or upper-cased (50, 51); the
    condition made False or True (52, 53); 'exact' misspelt or upper-cased (54, 55); the randomization tests run
    with no seed, the seed as the sample count, or the default count (20, 23, 24: 151 of 501 with seed 0 and
    500 samples); the default sample count changed (1: 3022 of 10001 with seed 7)."""
    assert paired_tests_many(ITEMS, seed=0, samples=500) == [
        EXACT, {"test": "fisher-randomization", "p_value": 151 / 501, "samples": 500}, MCNEMAR]
    assert paired_tests_many(ITEMS, seed=7) == [
        EXACT, {"test": "fisher-randomization", "p_value": 3022 / 10001, "samples": 10000}, MCNEMAR]


def test_fisher_randomization_draws_10000_patterns_unless_told():
    """fisher_randomization draws 10000 sign patterns unless told.

    Kills: fisher_randomization's default sample count changed to 10001 (x_fisher_randomization__mutmut_1)."""
    assert fisher_randomization(B17, A17, seed=7) == 3022 / 10001 == fisher_randomization(B17, A17, 7, 10000)


def test_paired_tests_many_names_the_kinds_it_knows():
    """An unknown kind of measure is refused, naming the kinds known.

    Kills: the unknown-kind message replaced by None, its kinds joined by None (a TypeError) or by 'XX, XX'
    (x_paired_tests_many__mutmut_5-7)."""
    with pytest.raises(ValueError) as error:
        paired_tests_many([(H0, H1, "binary"), (H0, H1, "ordinal")], seed=0)
    assert str(error.value) == "unknown kind 'ordinal'; choose one of: binary, continuous"


def test_holm_takes_a_p_value_of_zero():
    """Holm's correction takes a p-value of exactly 0.

    Kills: p = 0 refused (`0.0 < p`, x_holm__mutmut_5): a p-value of exactly 0 is a p-value."""
    assert holm([0.02, 0.0, 0.5]) == [0.04, 0.0, 0.5]


def test_paired_test_is_exact_up_to_16_questions():
    """paired_test enumerates every sign pattern up to 16 questions and samples from 17 on."""
    assert EXACT_MAX_N == 16
    before = [0.0] * EXACT_MAX_N
    after = [0.5] * (EXACT_MAX_N - 1) + [0.25]
    assert paired_test(before, after, "continuous", seed=0, samples=100)["samples"] == "exact"
    assert paired_test(before + [0.0], after + [1.0], "continuous", seed=0, samples=100)["samples"] == 100


def test_paired_test_samples_10000_sign_patterns_by_default():
    """paired_test samples 10000 sign patterns by default."""
    before, after = [0.0] * (EXACT_MAX_N + 1), [0.5] * (EXACT_MAX_N + 1)
    assert paired_test(before, after, "continuous", seed=0)["samples"] == 10000


# Fisher's randomization test at its boundaries: a sign pattern whose statistic equals the threshold
# exactly, the rounding margin of the batched statistics, the memory bound on the sign draws, the defaults,
# and the input checks


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
    """In the exact test a sign pattern whose statistic equals the threshold counts as reaching it.

    Kills x__exact_p__mutmut_24 (>= -> >): n = 2, two of the four patterns reach the observed statistic and the
    other two land exactly on the threshold; the documented rule T(s) >= observed - tol counts all four."""
    d = _tie(2)
    assert significance._exact_p(d) == 1.0
    assert significance.fisher_randomization(np.zeros(2), d, seed=0) == 1.0


def test_a_pattern_exactly_at_the_threshold_counts_when_sampled():
    """In the sampled test a drawn pattern whose statistic equals the threshold counts as reaching it.

    Kills x__sampled_counts__mutmut_73 (the recount's >= -> >): n = 17 is sampled; every drawn pattern either
    reaches the observed statistic or lands exactly on the threshold, so every one counts and p = 1."""
    d = _tie(17)
    assert significance.fisher_randomization(np.zeros(17), d, seed=5, samples=300) == 1.0
    # and next to an ordinary pair of runs in one batch (the matrix product holds two columns)
    other = np.linspace(-0.3, 0.5, 17)
    many = significance.fisher_randomization_many([(np.zeros(17), d), (np.zeros(17), other)], seed=5, samples=300)
    assert many[0] == 1.0
    assert many[1] == significance.fisher_randomization(np.zeros(17), other, seed=5, samples=300)


def test_the_margin_is_twice_the_two_orders_bound():
    """The recount margin of the batched statistics is twice the bound on how far two summation orders can land apart.

    Kills x__margin__mutmut_3..14, 17..28: _margin(d) = 2 * 2 * (gamma * sum|d| / n + 2 u mean|d|) with
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
    """Sign draws are bounded in memory: one pattern at a time when a single pattern is over the bound.

    Kills x__sampled_counts__mutmut_18 (max(1, ...) -> max(2, ...)): at most _CHUNK_ELEMENTS signs are drawn at
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
    """fisher_randomization_many draws 10000 sign patterns by default.

    Kills x_fisher_randomization_many__mutmut_1 (default 10000 -> 10001)."""
    before = np.linspace(0.0, 1.0, 30)
    after = before + np.sin(np.arange(30.0)) * 0.2 + 0.05
    explicit = significance.fisher_randomization_many([(before, after)], seed=11, samples=10000)
    assert significance.fisher_randomization_many([(before, after)], seed=11) == explicit
    assert explicit != significance.fisher_randomization_many([(before, after)], seed=11, samples=10001)


def test_values_read_as_decimals_are_numbers():
    """Per-question values read as DuckDB DECIMALs (Python Decimals) and booleans are taken as the same floats.

    Kills x__paired_arrays__mutmut_3, 5, 8, 10 (dtype=float dropped): per-question values as a DuckDB DECIMAL
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
    """Per-question values that are not flat sequences are refused with their message.

    Kills x__paired_arrays__mutmut_11 (or -> and) and _17 (the message)."""
    with pytest.raises(ValueError, match=r"^before and after must be flat sequences of per-question values$"):
        significance.fisher_randomization(before, after, seed=0)


def test_no_questions_and_non_finite_values_are_refused_with_their_messages():
    """No questions, or a value that is not finite, is refused with its own message.

    Kills x__paired_arrays__mutmut_24 and x_fisher_randomization_many__mutmut_14 (the messages)."""
    with pytest.raises(ValueError, match=r"^no observations$"):
        significance.fisher_randomization([], [], seed=0)
    with pytest.raises(ValueError, match=r"^before and after must be finite numbers$"):
        significance.fisher_randomization([0.1, float("nan")], [0.2, 0.3], seed=0)
