"""The sign-flip (randomization) test of a mean, and the table of subset means every p-value and bound reads.

With values ``d_i`` and a hypothesised mean ``delta``, the sign-flip test of H0 "mean(d) = delta" flips the sign
of ``d_i - delta`` on a random subset S of the values. Flipping S moves the sum by ``-2 * sum_S (d_i - delta)``, so
the two one-sided p-values are::

    p_greater(delta) = P_S( sum_S d_i <= |S| * delta )     (evidence that mean(d) > delta)
    p_less(delta)    = P_S( sum_S d_i >= |S| * delta )     (evidence that mean(d) < delta)

over S uniform on all 2**n subsets (the empty set, the observed pattern, always counts). For every S the event
is monotone in ``delta``: p_greater never decreases and p_less never increases as delta grows, so inverting the
test gives an interval (Good, *Permutation Tests*, 2005, s. 3.3). The gate's test of a graded measure against
its bar (assay.verdicts.bar_test) is this test applied to ``x_i - bar``.

Exact when the subsets can be enumerated by counts of equal values (at most ``EXACT_CELLS`` cells); otherwise
``samples`` random subsets drawn from numpy's PCG64 seeded with ``seed`` plus the observed one, each of weight
1 / (samples + 1). The same seed gives the same answer every run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EXACT_CELLS = 1 << 16
"""Up to this many cells (one per count of each distinct change) a graded comparison is enumerated exactly."""

EXACT_CELLS_BINARY = 1 << 21
"""The same for 0/1 measures (three distinct changes): exact up to a few hundred questions (0.4 s at 1M cells)."""

SAMPLES = 10000

_REL_TOL = 1e-12

DECIMALS = 12
"""Means and hypothesised changes are compared on this grid (see ``snap``)."""


@dataclass(frozen=True)
class NullDistribution:
    """The subset means ``t`` (sorted, distinct) with their weights; ``empty`` is the weight of the empty subset.
    ``patterns``: "exact", or the number of random subsets drawn."""

    t: np.ndarray
    le: np.ndarray  # le[j] = empty + weight of subsets with mean <= t[j]  (p_greater at t[j])
    ge: np.ndarray  # ge[j] = empty + weight of subsets with mean >= t[j]  (p_less at t[j])
    empty: float
    patterns: object

    def p_greater(self, delta: float) -> float:
        j = int(np.searchsorted(self.t, snap(delta), side="right")) - 1
        return float(self.le[j]) if j >= 0 else self.empty

    def p_less(self, delta: float) -> float:
        j = int(np.searchsorted(self.t, snap(delta), side="left"))
        return float(self.ge[j]) if j < self.t.size else self.empty

    def lower(self, a: float) -> float:
        """min{delta : p_greater(delta) >= a}; -inf when every delta qualifies."""
        if self.empty >= a:
            return -math.inf
        j = int(np.searchsorted(self.le >= a, True))  # le is nondecreasing: the first index reaching a
        return float(self.t[j]) if j < self.t.size else math.inf

    def upper(self, a: float) -> float:
        """max{delta : p_less(delta) >= a}; +inf when every delta qualifies."""
        if self.empty >= a:
            return math.inf
        reach = np.flatnonzero(self.ge >= a)  # ge is nonincreasing: the last index reaching a
        return float(self.t[reach[-1]]) if reach.size else -math.inf


def _fraction(counts, denominator: int) -> np.ndarray:
    if counts.dtype == object:
        return np.array([int(c) / denominator for c in counts], dtype=float)
    return counts / denominator  # int64 to float64 rounds once; the denominator is exact (2**n <= 2**62, or B + 1)


def snap(x):
    """Subset means and hypothesised changes on one grid of 1e-12: two that are equal in exact arithmetic
    (0.1 + 0.2 against 0.3) compare equal, so a tie is a tie whatever order the sum was taken in."""
    return np.round(x, DECIMALS) + 0.0  # + 0.0: -0.0 becomes 0.0


def null_distribution(d, seed: int, samples: int = SAMPLES) -> NullDistribution:
    """The distribution of the subset mean ``t_S`` (see the module docstring) of the changes ``d``."""
    d = np.asarray(d, dtype=float)
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    values, counts = np.unique(d, return_counts=True)
    cells = math.prod(int(c) + 1 for c in counts)
    if cells <= (EXACT_CELLS_BINARY if _binary(d) else EXACT_CELLS):
        # integer counts of sign patterns, so that p-values are exact fractions of 2**n rounded once
        kind = np.int64 if d.size <= 62 else object
        size, total, weight = np.zeros(1, dtype=np.int64), np.zeros(1), np.ones(1, dtype=kind)
        for v, k in zip(values, counts):
            j = np.arange(k + 1)
            size = (size[:, None] + j).ravel()
            total = (total[:, None] + j * v).ravel()
            weight = (weight[:, None] * np.array([math.comb(int(k), int(x)) for x in j], dtype=kind)).ravel()
        denominator = 1 << d.size
        patterns: object = "exact"
    else:
        rng = np.random.default_rng(seed)
        flips = rng.integers(0, 2, size=(samples, d.size), dtype=np.int8).astype(float)
        size = np.concatenate([[0], flips.sum(axis=1).astype(np.int64)])
        total = np.concatenate([[0.0], flips @ d])
        weight = np.ones(size.size, dtype=np.int64)
        denominator = samples + 1
        patterns = samples
    # a sum that is zero in exact arithmetic may round to +-1e-17: it is zero (scale-free tolerance)
    total[np.abs(total) <= _REL_TOL * float(np.abs(d).sum())] = 0.0
    nonempty = size > 0
    empty_count = int(weight[~nonempty].sum())
    t, inverse = np.unique(snap(total[nonempty] / size[nonempty]), return_inverse=True)
    w = np.zeros(t.size, dtype=weight.dtype)
    np.add.at(w, inverse.ravel(), weight[nonempty])
    # p = count / denominator, each rounded once (int / int is correctly rounded)
    le = _fraction(empty_count + np.cumsum(w), denominator)
    ge = _fraction(empty_count + np.cumsum(w[::-1])[::-1], denominator)
    empty = empty_count / denominator
    return NullDistribution(t, le, ge, empty, patterns)


def _binary(d) -> bool:
    return bool(np.all(np.isin(d, (-1.0, 0.0, 1.0))))
