"""Correcting a family of tests as a whole: Holm (default), Bonferroni, or none.

For m p-values and a family-wise level alpha, each test gets the level it is decided at, so that "rejected"
is exactly "p < its level", and an interval computed at that level excludes the null exactly when the test is
rejected:

- ``holm`` (Holm 1979, step-down): sort ascending; step j (0-based) tests p_(j) at alpha / (m - j) and stops at
  the first p not below its level; every later test keeps the stopping step's level (its p is at least the
  stopping p, so it stays unrejected). Adjusted p: max_{j' <= j} min(1, (m - j') p_(j')).
- ``bonferroni``: every test at alpha / m; adjusted p min(1, m p).
- ``none``: every test at alpha; adjusted p = p.
"""

from __future__ import annotations

CORRECTIONS = ("holm", "bonferroni", "none")
NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no correction"}
"""How gate, regress and their verdicts name each correction."""


def correct(p_values: list[float], alpha: float, method: str = "holm") -> list[dict]:
    """Per p-value: ``{"level", "p_adjusted", "rejected"}``, in the order given."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; choose one of: {', '.join(CORRECTIONS)}")
    m = len(p_values)
    if method == "none":
        levels, adjusted = [alpha] * m, list(p_values)
    elif method == "bonferroni":
        levels, adjusted = [alpha / m] * m, [min(1.0, m * p) for p in p_values]
    else:
        adjusted = holm(list(p_values))
        levels = [0.0] * m
        stopped = None
        for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
            if stopped is None and not p_values[i] < alpha / (m - rank):
                stopped = alpha / (m - rank)
            levels[i] = alpha / (m - rank) if stopped is None else stopped
    return [{"level": lv, "p_adjusted": adj, "rejected": p < lv} for p, lv, adj in zip(p_values, levels, adjusted)]


def holm(p_values: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given.

    With the m p-values sorted ascending, ``p_(0) <= ... <= p_(m-1)``::

        adj_(i) = max_{j <= i} min(1, (m - j) * p_(j))      (j 0-based)

    The adjusted values are monotone in the sorted order and capped at 1;
    rejecting where ``adj <= alpha`` is Holm's step-down procedure at level
    alpha. Equal p-values get equal adjusted values.
    """
    m = len(p_values)
    for i, p in enumerate(p_values):
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"p-value at index {i} is {p!r}; p-values lie in [0, 1]")
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
