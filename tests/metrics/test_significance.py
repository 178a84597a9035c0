"""Paired significance tests, each checked against an independent reference.

References: scipy.stats (binomtest, permutation_test) and brute-force
enumerations written here in exact (Fraction) arithmetic.
"""

import itertools
import random
from fractions import Fraction

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
