"""One paired inference per comparison: a score test of the mean change and the interval that inverts it.

With n questions, per-question changes ``d_i = b_i - a_i`` (candidate minus baseline) on [-1, 1] and a
hypothesised mean change ``delta``, both kinds of measure use a score statistic::

    Z(delta) = (sum d_i - n * delta) / sqrt(n * V(delta))

with ``V(delta)`` the variance of one change estimated under the hypothesis. Two-sided, ``p = 2 * (1 -
Phi(|Z(0)|))`` and the ``1 - alpha`` interval is every delta the test does not reject, ``{delta : |Z(delta)| <=
z_{1 - alpha/2}}``; one-sided ("less": H1 change < null), ``p = Phi(Z(null))`` and the bound ``sup{delta :
Z(delta) >= z_alpha}``. Both read the same Z, so the interval excludes a null exactly when its p is below alpha.

- **0/1 measures** (each question won, lost or unchanged; b won, c lost): Tango's score interval for a
  difference of paired proportions (Tango, *Statistics in Medicine* 17:891, 1998). ``V(delta) = 2q + delta -
  delta**2`` with q the maximum-likelihood share of lost questions among the distributions whose mean change is
  delta (a root of a quadratic). At 0 the test is McNemar's without continuity correction, ``Z(0) = (b - c) /
  sqrt(b + c)``. The pair Fagerland, Lydersen & Laake recommend (*BMC Medical Research Methodology* 13:91, 2013;
  *Statistics in Medicine* 33:2850, 2014): the exact conditional test is needlessly conservative, and intervals
  from the observed changes alone collapse when few questions change.
- **graded measures**: ``V(delta)`` is the mean squared distance of the changes from delta, with one
  pseudo-question added: half a question at ``+r`` and half at ``-r``, r the root mean square of the changes
  that are not 0 (the size of a typical change; 1 when none changed). A variance about the hypothesis rather than about the sample mean is what makes it a score test;
  the pseudo-question keeps an interval from collapsing to a point when few questions change (the graded
  counterpart of the pseudo-counts of Agresti & Min, 2005, and Bonett & Price, 2012, for 0/1 changes). The set
  ``|Z| <= z`` is then where a quadratic in delta is not positive: its roots are the ends.

Why not the sign-flip test inverted (assay's earlier interval, still the gate's one-sample test): conditional on
the changes seen, it cannot say that more questions could have changed; at 10 questions with 3% won and 1%
lost it held the true change 26% of the time, at 10 graded questions of which 80% are unchanged 59%. These
intervals hold 93-100% there (bench/paired_coverage.py; docs/benchmarks.md). No sampling: the same input gives
the same figures on every machine, with no seed to record. Plain Python (no numpy): a comparison's verdict loads
quickly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

METHODS = ("tango-score", "score")
"""The method names: 0/1 changes (Tango's score interval; McNemar's test at 0), graded ones."""

PSEUDO = 0.5
"""The weight at each of +r and -r in a graded change's variance (together one question)."""

_STEPS = 200


@dataclass(frozen=True)
class Inference:
    """One comparison's verdict figures: the change, its interval and p-value, from one procedure."""

    n: int
    change: float
    low: float
    high: float
    p_value: float
    alpha: float
    alternative: str  # "two-sided", or "less" (H1: change < null)
    null: float
    method: str

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha


def changes(before, after) -> list[float]:
    """The per-question changes ``after - before``; a clear error for unpaired, empty or non-finite input."""
    try:
        a, b = [float(x) for x in before], [float(x) for x in after]
    except TypeError:
        a, b = [], [None]
    if len(a) != len(b):
        raise ValueError("before and after must be flat sequences of the same length, paired question by question")
    if not a:
        raise ValueError("no observations")
    d = [y - x for x, y in zip(a, b)]
    if not all(math.isfinite(x) for x in d):
        raise ValueError("before and after must be finite numbers")
    if any(abs(x) > 1.0 for x in d):
        raise ValueError("changes must lie in [-1, 1]: the measures compared lie in [0, 1]")
    return d


class Tango:
    """Z(delta) of 0/1 changes: b won, c lost of n."""

    method = METHODS[0]

    def __init__(self, d: list[float]):
        self.n, self.b, self.c = len(d), sum(1 for x in d if x > 0), sum(1 for x in d if x < 0)
        self.mean = (self.b - self.c) / self.n

    def z(self, delta: float) -> float:
        n, b, c = self.n, self.b, self.c
        numerator = b - c - n * delta
        if numerator == 0.0:
            return 0.0
        if abs(delta) >= 1.0:
            return math.copysign(math.inf, numerator)
        x = (b + c) + (b - c - 2 * n) * delta
        q = (x + math.sqrt(max(0.0, x * x + 8.0 * n * c * delta * (1.0 - delta)))) / (4.0 * n)  # share lost
        variance = 2.0 * q + delta - delta * delta
        return numerator / math.sqrt(n * variance) if variance > 0.0 else math.copysign(math.inf, numerator)

    def ends(self, crit_low: float | None, crit_high: float) -> tuple[float, float]:
        """The delta where Z falls to ``-crit_high`` above the mean, and rises to ``crit_low`` below it (None:
        one-sided, the lower end is -1). Z decreases in delta (Tango, 1998), so bisection finds each."""
        return (-1.0 if crit_low is None else self._cross(-1.0, crit_low, rising=True),
                self._cross(1.0, -crit_high, rising=False))

    def _cross(self, bound: float, level: float, rising: bool) -> float:
        inside, outside = self.mean, bound  # Z(inside) = 0 is accepted
        if (self.z(bound) <= level) if rising else (self.z(bound) >= level):
            return bound
        for _ in range(_STEPS):
            mid = (inside + outside) / 2
            if mid in (inside, outside):
                break
            accepted = self.z(mid) <= level if rising else self.z(mid) >= level
            inside, outside = (mid, outside) if accepted else (inside, mid)
        return inside


class Graded:
    """Z(delta) of graded changes: the variance about delta with one pseudo-question split between +r and -r."""

    method = METHODS[1]

    def __init__(self, d: list[float]):
        self.n = len(d)
        self.s1, self.s2 = math.fsum(d), math.fsum(x * x for x in d)
        self.mean = self.s1 / self.n
        moved = [x for x in d if x != 0.0]
        self.r = math.sqrt(math.fsum(x * x for x in moved) / len(moved)) if moved else 1.0

    def _spread(self, delta: float) -> float:
        """sum (d_i - delta)**2 plus the pseudo-question's PSEUDO * ((r - delta)**2 + (r + delta)**2)."""
        return self.s2 - 2.0 * delta * self.s1 + self.n * delta * delta + 2.0 * PSEUDO * (self.r ** 2 + delta ** 2)

    def z(self, delta: float) -> float:
        numerator = self.s1 - self.n * delta
        if abs(numerator) <= 1e-12 * max(1.0, abs(self.s1)):
            return 0.0
        m = self.n + 2.0 * PSEUDO
        return numerator / math.sqrt(self.n * self._spread(delta) / m)

    def ends(self, crit_low: float | None, crit_high: float) -> tuple[float, float]:
        """|Z(delta)| <= k where ``n * m * (mean - delta)**2 - k**2 * spread(delta)``, a quadratic in delta, is
        not positive; its roots are the ends (clipped to [-1, 1]; the whole range when it does not open upward)."""
        return (-1.0 if crit_low is None else self._root(crit_low, -1.0), self._root(crit_high, 1.0))

    def _root(self, k: float, side: float) -> float:
        n, m, k2 = self.n, self.n + 2.0 * PSEUDO, k * k
        a = n * m - k2 * (n + 2.0 * PSEUDO)
        b = -2.0 * n * m * self.mean + 2.0 * k2 * self.s1
        c = n * m * self.mean ** 2 - k2 * (self.s2 + 2.0 * PSEUDO * self.r ** 2)
        if a <= 0.0:  # n <= k**2: no delta is rejected on this side
            return side
        root = math.sqrt(max(0.0, b * b - 4.0 * a * c))
        end = (-b + side * root) / (2.0 * a) if b * side <= 0 else 2.0 * c / (-b - side * root)
        return min(1.0, max(-1.0, end))


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def statistic(d: list[float]) -> Tango | Graded:
    return Tango(d) if all(x in (-1.0, 0.0, 1.0) for x in d) else Graded(d)


def method_name(before, after) -> str:
    """``tango-score`` for 0/1 changes, else ``score``."""
    return statistic(changes(before, after)).method


def infer(before, after, alpha: float = 0.05, alternative: str = "two-sided", null: float = 0.0) -> Inference:
    """The paired inference of the mean change ``after - before``.

    ``alternative="two-sided"``: p of H0 "change = null" and the ``1 - alpha`` interval; the interval excludes
    ``null`` exactly when ``p < alpha``. ``alternative="less"``: p of H0 "change >= null" against "change <
    null" and the one-sided ``1 - alpha`` interval [-1, hi]; hi < null exactly when p < alpha."""
    d = changes(before, after)
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    stat = statistic(d)
    null = float(null)
    z = stat.z(null)
    if alternative == "two-sided":
        p = min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))
        crit = NormalDist().inv_cdf(1.0 - alpha / 2) if alpha < 1.0 else 0.0
        low, high = stat.ends(crit, crit)
    elif alternative == "less":
        p = _phi(z)
        low, high = stat.ends(None, NormalDist().inv_cdf(1.0 - alpha)) if alpha < 1.0 else (-1.0, stat.mean)
    else:
        raise ValueError(f"unknown alternative {alternative!r}; choose two-sided or less")
    mean = math.fsum(d) / len(d)
    # an end found to rounding may sit an ulp on the wrong side of the mean, which is always inside
    return Inference(len(d), mean, min(low, mean), max(high, mean), p, alpha, alternative, null, stat.method)
