"""Seeded simulation: every interval assay reports covers the true mean at least 93% of the time.

Each cell draws REPS samples of n per-question values and counts how many intervals contain the
true mean. With REPS = 2000 the standard error of a coverage near 0.95 is
sqrt(0.95 * 0.05 / 2000) = 0.0049, so 0.93 sits four standard errors below a 95% interval: a
method that truly covers 95% does not fail here by chance, and one that covers 92% rarely passes.
The draws are seeded, so the figures are the same on every run. The full table, with more
distributions and repetitions, is printed by bench/interval_coverage.py.
"""

import numpy as np
import pytest
from scipy.stats import binom

from assay.metrics.stats import _graded, wilson

REPS = 2000
NS = (10, 30, 100)
FLOOR = 0.93


def inflated(rng, size, p0, p1, a, b):
    """0 with probability p0, 1 with p1, else Beta(a, b): per-query RR and nDCG look like this."""
    u = rng.random(size)
    values = np.where(u < p0, 0.0, np.where(u < p0 + p1, 1.0, rng.beta(a, b, size)))
    return values, p1 + (1 - p0 - p1) * a / (a + b)


GRADED = {
    "Beta(2,2)": lambda rng, s: (rng.beta(2, 2, s), 0.5),
    "Beta(.5,.5)": lambda rng, s: (rng.beta(0.5, 0.5, s), 0.5),
    "Beta(.5,5)": lambda rng, s: (rng.beta(0.5, 5, s), 0.5 / 5.5),
    "Beta(5,.5)": lambda rng, s: (rng.beta(5, 0.5, s), 5 / 5.5),
    "nDCG-like": lambda rng, s: inflated(rng, s, 0.25, 0.35, 2, 2),
    "ceiling, rare zeros": lambda rng, s: inflated(rng, s, 0.05, 0.85, 8, 1),
}


def pairs(rng, size, kind):
    before, before_mean = inflated(rng, size, 0.25, 0.35, 2, 2)
    keep = rng.random(size)
    if kind == "mostly identical":
        other, _ = inflated(rng, size, 0.25, 0.35, 2, 2)
        return before, np.where(keep < 0.7, before, other), 0.0
    if kind == "improved":
        better, better_mean = inflated(rng, size, 0.0, 0.85, 2, 2)
        return before, np.where(keep < 0.5, before, better), 0.5 * (better_mean - before_mean)
    return before, rng.beta(5, 2, size), 5 / 7 - before_mean


def coverage(low, high, truth):
    return float(np.mean((low <= truth) & (truth <= high)))


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("name", GRADED)
def test_graded_interval_covers(name, n):
    rng = np.random.default_rng([1, n, list(GRADED).index(name)])
    values, mean = GRADED[name](rng, (REPS, n))
    # all rows share seed 0's resampling indices, as every call with a run's seed does
    low, high = _graded(values, np.random.default_rng(0), 1000)
    assert coverage(low, high, mean) >= FLOOR


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("kind", ["mostly identical", "improved", "independent"])
def test_paired_delta_covers(kind, n):
    rng = np.random.default_rng([2, n, len(kind)])
    before, after, delta = pairs(rng, (REPS, n), kind)
    low, high = _graded((after - before + 1) / 2, np.random.default_rng(0), 1000, paired=True)
    assert coverage(2 * low - 1, 2 * high - 1, delta) >= FLOOR


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("p", [0.05, 0.1, 0.3, 0.5, 0.9])
def test_wilson_covers_exactly(p, n):
    # exact: the probability of every count k times whether wilson(k, n) contains p; no luck involved
    covered = [k for k in range(n + 1) if wilson(k, n)[0] <= p <= wilson(k, n)[1]]
    assert binom.pmf(covered, n, p).sum() >= FLOOR


def test_plain_wilson_is_what_falls_short():
    bounds = [wilson(k, 10, continuity=False) for k in range(11)]
    covered = [k for k, (low, high) in enumerate(bounds) if low <= 0.05 <= high]
    assert binom.pmf(covered, 10, 0.05).sum() == pytest.approx(0.914, abs=1e-3)
