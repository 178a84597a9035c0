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


def correct(p_values: list[float], alpha: float, method: str = "holm") -> list[dict]:
    """Per p-value: ``{"level", "p_adjusted", "rejected"}``, in the order given."""
    from assay.metrics.significance import holm

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
