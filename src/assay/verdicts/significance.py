"""Paired significance tests for comparing two runs question by question.

Two tests, chosen by what the per-question values are:

- ``binary`` (hit/miss measures such as ``Success@k``): McNemar's exact test on
  the discordant pairs.
- ``continuous`` (graded measures such as ``nDCG@10``, ``RR@10``): Fisher's
  randomization test of the mean difference, as recommended for IR by Smucker,
  Allan & Carterette (2007).

``holm`` adjusts a family of p-values (one per measure, or per pipeline pair)
for multiple comparisons. Every function is pure: same inputs, same seed, same
answer.
"""

from __future__ import annotations

import numpy as np

from assay.verdicts.family import holm  # noqa: F401  (its home is family.py: Holm needs no numpy)

EXACT_MAX_N = 16
"""Up to this many questions the randomization test enumerates all 2**n sign patterns."""

_CHUNK_ELEMENTS = 1 << 20
"""At most this many sign draws (samples x questions) are held in memory at once."""

_REL_TOL = 1e-12


def _paired_arrays(before, after) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(before, dtype=float)
    b = np.asarray(after, dtype=float)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("before and after must be flat sequences of per-question values")
    if a.size != b.size:
        raise ValueError(
            f"before has {a.size} values but after has {b.size}; pair them question by question"
        )
    if a.size == 0:
        raise ValueError("no observations")
    return a, b


def fisher_randomization(before, after, seed: int, samples: int = 10000) -> float:
    """Two-sided p-value of Fisher's paired randomization test of the mean difference.

    With per-question differences ``d_i = after_i - before_i`` (i = 1..n)::

        T(s)     = | (1/n) * sum_i s_i * d_i |,      s_i in {-1, +1}
        observed = T(+1, ..., +1) = | mean(d) |

    Under the null hypothesis that the two systems are exchangeable on every
    question, each sign pattern ``s`` is equally likely.

    - n <= ``EXACT_MAX_N`` (16): the p-value is EXACT, over all 2**n patterns::

          p = #{s : T(s) >= observed - tol} / 2**n

    - larger n: ``samples`` patterns are drawn, each ``s_i`` independently
      +1 or -1 with probability 1/2, and (counting the observed pattern)::

          p = (#{drawn s : T(s) >= observed - tol} + 1) / (samples + 1)

      The generator is numpy's PCG64 seeded with ``seed``; patterns are drawn
      in chunks so memory stays bounded whatever ``samples`` is.

    ``tol = 1e-12 * mean(|d|)`` (``mean(|d|)`` is the largest ``T`` any pattern
    reaches) absorbs floating-point rounding, so a pattern whose statistic
    equals the observed one in exact arithmetic is always counted, at any scale
    of the values. When every difference is zero the p-value is 1.0.
    """
    return fisher_randomization_many([(before, after)], seed, samples)[0]


def fisher_randomization_many(pairs, seed: int, samples: int = 10000) -> list[float]:
    """``fisher_randomization(before, after, seed, samples)`` of each ``(before, after)`` pair, the same p-values.

    Drawing the sign patterns is most of a test's cost, and it depends only on the seed and the number of
    questions: the pairs of one size share one draw (the very patterns each would draw alone, chunk by chunk),
    so a comparison's tests over every measure and level of a slice cost little more than one."""
    diffs = []
    for before, after in pairs:
        a, b = _paired_arrays(before, after)
        d = b - a
        if not np.all(np.isfinite(d)):
            raise ValueError("before and after must be finite numbers")
        diffs.append(d)
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    p_values: list[float] = [1.0] * len(diffs)
    sampled: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        if not np.any(d):
            continue
        if d.size <= EXACT_MAX_N:
            p_values[i] = _exact_p(d)
        else:
            sampled.setdefault(d.size, []).append(i)
    for n, group in sampled.items():
        counts = _sampled_counts([diffs[i] for i in group], seed, samples)
        for i, count in zip(group, counts):
            p_values[i] = (count + 1) / (samples + 1)
    return p_values


def _threshold(d) -> float:
    """The observed statistic less the rounding tolerance (see ``fisher_randomization``)."""
    return abs(float(d.mean())) - _REL_TOL * float(np.abs(d).mean())


def _exact_p(d) -> float:
    n = d.size
    patterns = np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n)
    signs = 1.0 - 2.0 * (patterns & 1)
    stats = np.abs(signs @ d) / n
    return float(np.count_nonzero(stats >= _threshold(d))) / (1 << n)


def _sampled_counts(diffs, seed: int, samples: int) -> list[int]:
    """For each difference vector (all of one length n): how many of ``samples`` sign patterns drawn from PCG64
    seeded with ``seed`` reach its threshold. Patterns are drawn in chunks of at most ``_CHUNK_ELEMENTS`` signs,
    each chunk once for every vector.

    The statistics of every vector come from one matrix product per chunk, which sums in another order than
    ``signs @ d`` for one vector does. Each product ``s_i d_i`` is exact (s_i = +-1), so either order lands
    within ``(n - 1) u / (1 - (n - 1) u) * sum |d_i|`` of the exact sum (u = 2**-53, for any summation order):
    a statistic farther than twice that (with the division's rounding, ``_margin``) from the threshold falls on
    the same side either way. A chunk where one is nearer is counted again with ``signs @ d``, the product
    ``fisher_randomization`` made before the tests ran together, so every count is the one it made."""
    n = diffs[0].size
    thresholds = np.array([_threshold(d) for d in diffs])
    margins = np.array([_margin(d) for d in diffs])
    together = np.column_stack(diffs)
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_ELEMENTS // n)
    counts = [0] * len(diffs)
    remaining = samples
    while remaining:
        k = min(rows, remaining)
        signs = rng.integers(0, 2, size=(k, n), dtype=np.int8).astype(float)
        signs *= -2.0  # then + 1: the +-1.0 of 1.0 - 2.0 * draws, without two temporary arrays
        signs += 1.0
        stats = np.abs(signs @ together) / n
        near = (np.abs(stats - thresholds) <= margins).any(axis=0)
        reached = np.count_nonzero(stats >= thresholds, axis=0)
        for j, d in enumerate(diffs):
            counts[j] += int(np.count_nonzero(np.abs(signs @ d) / n >= thresholds[j]) if near[j] else reached[j])
        remaining -= k
    return counts


def _margin(d) -> float:
    """How far apart two summation orders of ``|s . d| / n`` can land, at most (see ``_sampled_counts``), twice
    over."""
    n = d.size
    u = 2.0 ** -53
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    return 2 * 2 * (gamma * float(np.abs(d).sum()) / n + 2 * u * float(np.abs(d).mean()))


def mcnemar_exact(before, after) -> dict:
    """McNemar's exact test for paired 0/1 outcomes (hit or miss per question).

    Only discordant questions carry information::

        b = #{before = 1, after = 0}    (lost)
        c = #{before = 0, after = 1}    (won)

    Under the null each discordant question is lost or won with probability
    1/2, so with ``X ~ Binomial(b + c, 1/2)`` the two-sided p-value is::

        p = min(1, 2 * P(X <= min(b, c)))
          = min(1, 2 * sum_{i=0}^{min(b,c)} C(b+c, i) / 2**(b+c))

    computed in exact integer arithmetic and rounded once, so it neither
    overflows nor loses precision for thousands of questions. p = 1.0 when
    ``b + c == 0``. Returns ``{"b": b, "c": c, "p_value": p}``.
    """
    a, z = _paired_arrays(before, after)
    for name, values in (("before", a), ("after", z)):
        bad = np.flatnonzero((values != 0) & (values != 1))
        if bad.size:
            raise ValueError(
                f"{name} must hold 0/1 outcomes; question index {int(bad[0])} "
                f"has {float(values[bad[0]])!r}; use the continuous test for graded values"
            )
    lost = int(np.count_nonzero((a == 1) & (z == 0)))
    won = int(np.count_nonzero((a == 0) & (z == 1)))
    n = lost + won
    if n == 0:
        return {"b": lost, "c": won, "p_value": 1.0}
    k = min(lost, won)
    term = 1  # C(n, 0)
    tail = 0
    for i in range(k + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    # int / int is correctly rounded in Python, however large the operands.
    return {"b": lost, "c": won, "p_value": min(1.0, (2 * tail) / (1 << n))}


def _binary(before, after, seed: int, samples: int) -> dict:
    return {"test": "mcnemar-exact", **mcnemar_exact(before, after)}


def _continuous(before, after, seed: int, samples: int) -> dict:
    p = fisher_randomization(before, after, seed=seed, samples=samples)
    exact = np.asarray(before).size <= EXACT_MAX_N
    return {"test": "fisher-randomization", "p_value": p, "samples": "exact" if exact else samples}


KINDS = {"binary": _binary, "continuous": _continuous}
"""Kind of per-question value -> the test that suits it."""


def paired_test(before, after, kind: str, seed: int, samples: int = 10000) -> dict:
    """Run the paired test that suits ``kind`` of per-question values.

    - ``"binary"`` (0/1 outcomes): ``mcnemar_exact``; returns
      ``{"test": "mcnemar-exact", "b", "c", "p_value"}``.
    - ``"continuous"``: ``fisher_randomization``; returns
      ``{"test": "fisher-randomization", "p_value", "samples"}`` where
      ``samples`` is ``"exact"`` when all 2**n sign patterns were enumerated.
    """
    try:
        test = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}") from None
    return test(before, after, seed, samples)


def paired_tests_many(items, seed: int, samples: int = 10000) -> list[dict]:
    """``paired_test(before, after, kind, seed, samples)`` of each ``(before, after, kind)``, the same results;
    the randomization tests run together (``fisher_randomization_many``)."""
    items = list(items)
    for _, _, kind in items:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}")
    continuous = [i for i, (_, _, kind) in enumerate(items) if kind == "continuous"]
    p_values = dict(zip(continuous, fisher_randomization_many([items[i][:2] for i in continuous], seed, samples)))
    out = []
    for i, (before, after, kind) in enumerate(items):
        if kind == "binary":
            out.append(_binary(before, after, seed, samples))
        else:
            exact = np.asarray(before).size <= EXACT_MAX_N
            out.append({"test": "fisher-randomization", "p_value": p_values[i],
                        "samples": "exact" if exact else samples})
    return out

