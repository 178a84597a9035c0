"""How often assay's 95% intervals cover the true mean, on simulated per-question values.

For each distribution and n in (10, 30, 100), REPS samples of n values are drawn (numpy PCG64,
seed 1) and each gets the interval assay would report, through the same code as
``assay.metrics.stats`` (all samples share the 1,000 resampling indices of seed 0, as calls with
a run's seed do). Coverage is the share of samples whose interval contains the true mean; its
standard error is sqrt(0.95 * 0.05 / REPS), 0.0034 at the default 4,000.

- graded: ``bootstrap_mean`` on Beta distributions (symmetric, U-shaped, both skews), mixtures
  with point masses at 0 and 1 (nDCG-like, near the ceiling, near the floor), an RR-like
  distribution on {0, 1, 1/2, ..., 1/10} and Bernoulli values treated as graded.
- wilson: exact coverage of ``wilson`` (binomial probabilities, no simulation) at p = 0.05, 0.1,
  0.3, 0.5, 0.9, and the minimum over p on a grid 0.01..0.99, beside plain (uncorrected) Wilson.
- paired: ``paired_bootstrap_delta`` on pairs (before, after) of graded values: identical on most
  questions, improved, regressed on a few, independent.

Run: .venv/bin/python bench/interval_coverage.py [REPS]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.stats import binom

from assay.metrics.stats import Z95, _graded, _wilson

NS = (10, 30, 100)
WILSON_PS = (0.05, 0.1, 0.3, 0.5, 0.9)


def inflated(rng, size, p0, p1, a, b):
    """0 with probability p0, 1 with p1, else Beta(a, b): the shape of per-query RR or nDCG."""
    u = rng.random(size)
    return np.where(u < p0, 0.0, np.where(u < p0 + p1, 1.0, rng.beta(a, b, size))), p1 + (1 - p0 - p1) * a / (a + b)


def _rare_large(rng, size):
    big = rng.random(size) < 0.1
    values = np.where(big, rng.beta(8, 3, size), rng.beta(1, 60, size))
    return values, 0.1 * 8 / 11 + 0.9 * 1 / 61


RR_VALUES = np.array([0, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7, 1 / 8, 1 / 9, 1 / 10])
RR_PROBS = np.array([0.2, 0.45, 0.12, 0.07, 0.04, 0.03, 0.025, 0.02, 0.015, 0.015, 0.015])

GRADED = {
    "Beta(2,2)": lambda rng, s: (rng.beta(2, 2, s), 0.5),
    "Beta(.5,.5)": lambda rng, s: (rng.beta(0.5, 0.5, s), 0.5),
    "Beta(.5,5)": lambda rng, s: (rng.beta(0.5, 5, s), 0.5 / 5.5),
    "Beta(5,.5)": lambda rng, s: (rng.beta(5, 0.5, s), 5 / 5.5),
    "nDCG-like": lambda rng, s: inflated(rng, s, 0.25, 0.35, 2, 2),
    "near ceiling": lambda rng, s: inflated(rng, s, 0.0, 0.85, 2, 2),
    "near floor": lambda rng, s: inflated(rng, s, 0.85, 0.0, 2, 5),
    "ceiling, rare zeros": lambda rng, s: inflated(rng, s, 0.05, 0.85, 8, 1),
    "RR-like": lambda rng, s: (rng.choice(RR_VALUES, size=s, p=RR_PROBS / RR_PROBS.sum()),
                               float(RR_VALUES @ RR_PROBS / RR_PROBS.sum())),
    # span precision at a budget: most questions tiny (a short quote in 1,000 tokens), a few large
    "rare large values": lambda rng, s: _rare_large(rng, s),
    "Bernoulli(.9)": lambda rng, s: ((rng.random(s) < 0.9).astype(float), 0.9),
    "Bernoulli(.05)": lambda rng, s: ((rng.random(s) < 0.05).astype(float), 0.05),
}


def _pairs(rng, size, kind):
    before, before_mean = inflated(rng, size, 0.25, 0.35, 2, 2)
    same = rng.random(size)
    if kind == "mostly identical":
        other, _ = inflated(rng, size, 0.25, 0.35, 2, 2)
        return before, np.where(same < 0.7, before, other), 0.0
    if kind == "improved":
        better, better_mean = inflated(rng, size, 0.0, 0.85, 2, 2)
        return before, np.where(same < 0.5, before, better), 0.5 * (better_mean - before_mean)
    if kind == "few regressions":
        return before, np.where(same < 0.9, before, 0.0), -0.1 * before_mean
    return before, rng.beta(5, 2, size), 5 / 7 - before_mean


PAIRED = ("mostly identical", "improved", "few regressions", "independent")


def graded_coverage(values, mean, samples=1000):
    low, high = _graded(values, np.random.default_rng(0), samples)
    return float(np.mean((low <= mean) & (mean <= high))), float(np.mean(high - low))


def paired_coverage(before, after, delta, samples=1000):
    low, high = _graded((after - before + 1) / 2, np.random.default_rng(0), samples)
    low, high = 2 * low - 1, 2 * high - 1
    return float(np.mean((low <= delta) & (delta <= high))), float(np.mean(high - low))


def wilson_coverage(p, n, continuity=True):
    k = np.arange(n + 1)
    low, high = _wilson(k.astype(float), n, Z95, continuity)
    return float(binom.pmf(k, n, p)[(low <= p) & (p <= high)].sum())


def main(reps: int = 4000) -> None:
    started = time.perf_counter()
    rng = np.random.default_rng(1)
    print(f"95% intervals: coverage (mean width); {reps} samples a cell, "
          f"standard error {np.sqrt(0.95 * 0.05 / reps):.4f}\n")
    lowest = {}
    print("graded (bootstrap_mean)" + "".join(f"{'n=' + str(n):>17}" for n in NS))
    for name, draw in GRADED.items():
        cells = []
        for n in NS:
            values, mean = draw(rng, (reps, n))
            cov, width = graded_coverage(values, mean)
            lowest["graded", n] = min(lowest.get(("graded", n), 1.0), cov)
            cells.append(f"{cov:.3f} ({width:.3f})")
        print(f"  {name:<21}" + "".join(f"{c:>17}" for c in cells))
    print("\npaired delta" + "".join(f"{'n=' + str(n):>17}" for n in NS).rjust(62))
    for kind in PAIRED:
        cells = []
        for n in NS:
            before, after, delta = _pairs(rng, (reps, n), kind)
            cov, width = paired_coverage(before, after, delta)
            lowest["paired", n] = min(lowest.get(("paired", n), 1.0), cov)
            cells.append(f"{cov:.3f} ({width:.3f})")
        print(f"  {kind:<21}" + "".join(f"{c:>17}" for c in cells))
    print("\nwilson, exact" + "".join(f"{'p=' + str(p):>8}" for p in WILSON_PS) + "  min over p in 0.01..0.99")
    grid = np.linspace(0.01, 0.99, 981)
    for continuity, label in ((True, "corrected"), (False, "plain")):
        for n in NS:
            row = [wilson_coverage(p, n, continuity) for p in WILSON_PS]
            worst = min(wilson_coverage(p, n, continuity) for p in grid)
            if continuity:
                lowest["wilson", n] = min(row)
            print(f"  {label:<9} n={n:<3}" + "".join(f"{c:>8.3f}" for c in row) + f"  {worst:.3f}")
    print("\nlowest coverage" + "".join(f"{'n=' + str(n):>8}" for n in NS))
    for method in ("graded", "paired", "wilson"):
        print(f"  {method:<13}" + "".join(f"{lowest[method, n]:>8.3f}" for n in NS))
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
