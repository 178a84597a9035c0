"""Intervals: Wilson for rates, a seeded percentile bootstrap over questions for graded values."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n == 0:
        raise ValueError("no observations")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(values, seed: int, samples: int = 1000) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling questions with replacement.

    The generator is numpy's PCG64 seeded with ``seed``, so a run's figures are reproducible.
    """
    import numpy as np

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no observations")
    if data.size == 1 or np.all(data == data[0]):
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(samples, data.size))
    means = data[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def paired_bootstrap_delta(before, after, seed: int, samples: int = 1000) -> tuple[float, float]:
    """95% percentile interval of mean(after - before), resampling questions (pairs kept together)."""
    import numpy as np

    diff = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    return bootstrap_mean(diff, seed=seed, samples=samples)
