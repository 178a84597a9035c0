"""The kept resampling weights and the batched randomization test give the very floats of the code before them
(tests/measures/reference_stats.py): intervals, paired deltas and p-values compared with ==, not approx."""

import numpy as np
import pytest

import reference_stats as reference
from assay.verdicts import significance
from assay.measures import stats


def _cases(seed: int, count: int):
    """(before, after) pairs of graded values: continuous, on a grid (ties), mostly zero, near-flat, tiny n."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.choice([1, 2, 5, 16, 17, 40, 56, 300, 950, 1203]))
        kind = i % 5
        if kind == 0:
            a = rng.random(n)
        elif kind == 1:
            a = rng.integers(0, 6, n) / 5  # P@5-like: ties everywhere
        elif kind == 2:
            a = np.where(rng.random(n) < 0.8, 0.0, rng.random(n))  # span precision: most near 0
        elif kind == 3:
            a = np.full(n, 0.7)
            a[: max(1, n // 50)] = 0.65  # almost no spread
        else:
            a = 1 / rng.integers(1, 11, n)  # RR@10-like
        b = np.clip(a + rng.normal(rng.choice([0.0, 0.03]), 0.2, n) * (rng.random(n) < 0.6), 0.0, 1.0)
        yield n, i, a, b


def _same(x, y) -> bool:
    """Equal floats, and finite (two questions once gave both a NaN upper bound, which NaN-equal-NaN let pass)."""
    x, y = np.asarray(x), np.asarray(y)
    return bool(np.all(np.isfinite(x))) and np.array_equal(x, y)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_bootstrap_and_paired_delta_are_bit_identical_to_the_reference(monkeypatch):
    monkeypatch.setattr(stats, "_KEPT_BYTES", 3 * 8 * 950 * 200)  # a few kept at once: eviction is exercised
    stats._kept.clear()
    seeds = (0, 0, 7, 12345)  # seed 0 twice: the second call reads the kept weights
    for n, i, a, b in _cases(1, 60):
        seed = seeds[i % len(seeds)]
        samples = (200, 1000)[i % 2]
        expected = reference.bootstrap_mean(a, seed, samples)
        assert _same(stats.bootstrap_mean(a, seed=seed, samples=samples), expected), (n, i)
        assert _same(stats.bootstrap_mean(a, seed=seed, samples=samples), expected), (n, i)
        assert _same(stats.paired_bootstrap_delta(a, b, seed=seed, samples=samples),
                     reference.paired_bootstrap_delta(a, b, seed, samples)), (n, i)
    assert sum(w.nbytes for w in stats._kept.values()) <= stats._KEPT_BYTES


def test_kept_weights_are_read_only_and_those_of_a_fresh_generator():
    weights = stats.resample_weights(3, 40, 100)
    assert not weights.flags.writeable
    assert np.array_equal(weights, stats._weights(np.random.default_rng(3), 40, 100))
    assert stats.resample_weights(3, 40, 100) is weights


def test_several_rows_share_the_weights_of_one_seed():
    rows = np.random.default_rng(4).random((3, 80))
    low, high = stats._graded(rows, 9, 500)
    low_g, high_g = stats._graded(rows, np.random.default_rng(9), 500)
    assert np.array_equal(low, low_g) and np.array_equal(high, high_g)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_randomization_p_values_are_identical_to_the_reference():
    for n, i, a, b in _cases(2, 40):
        samples = (1, 999, 10000)[i % 3]
        assert significance.fisher_randomization(a, b, seed=i, samples=samples) == \
            reference.fisher_randomization(a, b, seed=i, samples=samples), (n, i)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_many_randomization_tests_at_once_are_those_made_one_by_one():
    cases = list(_cases(3, 30))
    pairs = [(a, b) for _, _, a, b in cases]
    for seed in (0, 11):
        batched = significance.fisher_randomization_many(pairs, seed=seed, samples=10000)
        assert batched == [reference.fisher_randomization(a, b, seed, 10000) for a, b in pairs]


def test_many_randomization_tests_check_each_pair():
    with pytest.raises(ValueError, match="pair them question by question"):
        significance.fisher_randomization_many([([0.1, 0.2], [0.3, 0.4]), ([0.1], [0.2, 0.3])], seed=0)
    assert significance.fisher_randomization_many([], seed=0) == []


def test_a_row_of_several_gets_the_figures_of_a_call_for_it_alone():
    rng = np.random.default_rng(8)
    rows = np.vstack([rng.random(300), rng.integers(0, 6, 300) / 5, np.full(300, 0.5), rng.random(300) ** 4])
    low, high = stats._graded(rows, 21, 1000)
    for row, lo, hi in zip(rows, low, high):
        assert _same((lo, hi), reference.bootstrap_mean(row, 21, 1000))


def test_intervals_are_each_samples_own():
    cases = list(_cases(4, 40))
    seeds = [(0, 5)[i % 2] for i in range(len(cases))]
    got = stats.intervals([a for _, _, a, _ in cases], "bootstrap", seeds, 1000)
    for (n, i, a, _), seed, pair in zip(cases, seeds, got):
        assert _same(pair, reference.bootstrap_mean(a, seed, 1000)), (n, i)
    binary = [[1.0, 0.0, 1.0], [0.0] * 7, [1.0]]
    assert stats.intervals(binary, "wilson", [0, 0, 0]) == [stats.wilson(sum(v), len(v)) for v in binary]
    with pytest.raises(ValueError, match="unknown interval kind"):
        stats.intervals([[0.5]], "normal", [0])


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("margin", ["as computed", "never near", "always near"])
def test_batched_counts_are_the_reference_whatever_the_margin(monkeypatch, margin):
    """The batched product is trusted only away from the threshold; near it the one-vector product decides.
    Forcing either branch everywhere still gives the reference's p-values on these cases, and so does the margin
    as computed, including differences with many zeros (patterns that tie the observed statistic exactly) and
    n large enough that the margin exceeds the tolerance."""
    if margin != "as computed":
        monkeypatch.setattr(significance, "_margin", lambda d: 0.0 if margin == "never near" else float("inf"))
    rng = np.random.default_rng(9)
    pairs = [(a, b) for _, _, a, b in _cases(5, 12)]
    for n in (60, 950, 3000):
        a = rng.integers(0, 6, n) / 5
        b = a.copy()
        b[: n // 10] = rng.integers(0, 6, n // 10) / 5  # nine tenths of the differences are 0
        pairs.append((a, b))
    got = significance.fisher_randomization_many(pairs, seed=3, samples=3000)
    assert got == [reference.fisher_randomization(a, b, 3, 3000) for a, b in pairs]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_paired_deltas_together_are_each_pairs_own():
    pairs = [(a, b) for _, _, a, b in _cases(6, 30)]
    got = stats.paired_bootstrap_deltas(pairs, seed=4)
    assert all(_same(g, reference.paired_bootstrap_delta(a, b, 4)) for g, (a, b) in zip(got, pairs))
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_bootstrap_deltas([([0.1, 0.2], [0.3])], seed=0)
