"""Whether a measure's true mean lies on the passing side of a bar: a one-sided test and the bound that inverts it.

A gate rule ``value >= bar`` (or ``>``) passes on the point estimate; the test asks whether the data show the
true mean above the bar: H0 "mean <= bar" against H1 "mean > bar", with the p-value taken at the boundary
``mean = bar``, the largest it can be under H0. A rule ``value <= bar`` (or ``<``) is the mirror image. For each,
the one-sided bound at level ``a`` is the set of boundaries the test does not reject, so that "the bound clears
the bar" holds exactly when "p < a":

- 0/1 values (k of n): the exact binomial test, ``p = P(Binomial(n, bar) >= k)`` for ``>=`` (``<= k`` for
  ``<=``), and its inversion, the one-sided Clopper-Pearson bound: the lower bound at level a is the ``m`` with
  ``P(Binomial(n, m) >= k) = a`` (0 when k = 0), found by bisection on that tail, which grows with m.
- graded values x_1..x_n: the one-sample sign-flip test of "mean = bar" (assay.verdicts.signflip) applied to
  ``x_i - bar`` (a permutation test; it assumes the values are spread symmetrically about the mean under H0): ``p = p_greater(bar)`` of
  the subset-mean table of the values, and the bound its ``lower(a)``, read from the same table.

A bar that nothing can fail (``>= 0``, ``<= 1``) has p = 0: its failing side is empty.
"""

from __future__ import annotations

import math

PASSING_ABOVE = (">=", ">")
"""Operators whose passing side is above the bar; ``<=`` and ``<`` pass below it."""


def _log_tail_terms(n: int, k: int, upper: bool):
    """log C(n, j) for the j of the tail: j >= k (``upper``) or j <= k."""
    js = range(k, n + 1) if upper else range(0, k + 1)
    lg = math.lgamma
    return [(j, lg(n + 1) - lg(j + 1) - lg(n - j + 1)) for j in js]


def binomial_tail(n: int, k: int, m: float, upper: bool) -> float:
    """``P(Binomial(n, m) >= k)`` (``upper``) or ``P(Binomial(n, m) <= k)``, summed term by term in logs."""
    if upper and k <= 0 or not upper and k >= n:
        return 1.0
    if m <= 0.0:
        return 0.0 if upper else 1.0
    if m >= 1.0:
        return 1.0 if upper else 0.0
    lm, l1m = math.log(m), math.log1p(-m)
    logs = [c + j * lm + (n - j) * l1m for j, c in _log_tail_terms(n, k, upper)]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))


def _binomial_bound(n: int, k: int, a: float, above: bool) -> float:
    """The one-sided Clopper-Pearson bound at level a: lower (``above``) or upper."""
    if above and k == 0:
        return 0.0
    if not above and k == n:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(200):  # P(X >= k) grows with m, P(X <= k) falls: bisect to the m where the tail is a
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        tail = binomial_tail(n, k, mid, above)
        if (tail < a) == above:
            lo = mid
        else:
            hi = mid
    return hi if above else lo


def _vacuous(op: str, bar: float) -> bool:
    return (op == ">=" and bar <= 0.0) or (op == "<=" and bar >= 1.0)


class Sample:
    """One rule's per-question values, ready to be tested against a bar and to give the bound that inverts the
    test. Graded values build their sign-flip table once (seeded: the same seed, the same p)."""

    def __init__(self, values, seed: int = 0, samples: int | None = None):
        self.values = [float(v) for v in values]
        if not self.values:
            raise ValueError("no observations")
        self.n = len(self.values)
        if all(v in (0.0, 1.0) for v in self.values):
            self.k, self.dist = int(sum(self.values)), None
            self.method, self.patterns = "binomial-exact", None
        else:
            from assay.verdicts.signflip import null_distribution

            self.k, self.dist = None, null_distribution(self.values, seed, *([] if samples is None else [samples]))
            self.method, self.patterns = "sign-flip", self.dist.patterns

    def p(self, op: str, bar: float) -> float:
        """The one-sided p of "the true mean is on the failing side of ``bar``" for a rule ``mean OP bar``."""
        above = op in PASSING_ABOVE
        if _vacuous(op, bar):
            return 0.0
        if self.dist is None:
            return binomial_tail(self.n, self.k, bar, above)
        return self.dist.p_greater(bar) if above else self.dist.p_less(bar)

    def bound(self, op: str, a: float) -> float:
        """The one-sided bound at level ``a`` that inverts ``p``: for ``>=``/``>`` the smallest mean the test at
        level a does not reject (a lower bound, confidence 1 - a), for ``<=``/``<`` the largest; within [0, 1]."""
        above = op in PASSING_ABOVE
        if self.dist is None:
            return _binomial_bound(self.n, self.k, a, above)
        b = self.dist.lower(a) if above else self.dist.upper(a)
        return min(max(b, 0.0), 1.0)
