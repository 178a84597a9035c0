"""How often `assay gate`'s one-sided test of a graded measure calls a pass clear when the true mean sits exactly on
the bar (the test's size; nominal 0.05), for distributions real measures have.

    PYTHONPATH=src python bench/gate_test_size.py [--reps 400]

The graded test is the one-sample sign-flip test of "mean = bar" (assay.verdicts.bar_test), which assumes the values
spread symmetrically about the mean under H0. Per distribution and n, the share of ``reps`` samples whose p is below
0.05, for a `>=` rule (evidence the mean is above the bar) and a `<=` rule, at bar = the true mean. 0/1 measures use
the exact binomial test, whose size is at most 0.05 by construction, so they are not simulated.
"""

from __future__ import annotations

import argparse

import numpy as np

from assay.verdicts.bar_test import Sample


def distributions(rng):
    """(name, draw(n), true mean)."""
    return [
        ("0/1 masses + uniform (nDCG-like)",
         lambda n: np.where(rng.random(n) < 0.3, 0.0, np.where(rng.random(n) < 0.4 / 0.7, 1.0, rng.random(n))),
         0.4 + 0.3 * 0.5),
        ("1/rank, 20% misses (RR-like)",
         lambda n: np.where(rng.random(n) < 0.2, 0.0, 1.0 / rng.integers(1, 11, n)),
         0.8 * float(np.mean(1.0 / np.arange(1, 11)))),
        ("Beta(0.5, 5) (small means)", lambda n: rng.beta(0.5, 5, n), 0.5 / 5.5),
        ("Beta(5, 0.5) (near the ceiling)", lambda n: rng.beta(5, 0.5, n), 5 / 5.5),
        ("85% at 1, else U(0, 0.5)", lambda n: np.where(rng.random(n) < 0.85, 1.0, rng.random(n) * 0.5),
         0.85 + 0.15 * 0.25),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--samples", type=int, default=2000, help="sign patterns drawn where not enumerated")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    print(f"size of the one-sided sign-flip test at alpha 0.05 ({args.reps} samples each)")
    print(f"{'distribution':34} {'n':>4} {'>= rule':>8} {'<= rule':>8}")
    for name, draw, mean in distributions(rng):
        for n in (10, 30, 100):
            above = below = 0
            for _ in range(args.reps):
                sample = Sample(draw(n), seed=0, samples=args.samples)
                above += sample.p(">=", mean) < 0.05
                below += sample.p("<=", mean) < 0.05
            print(f"{name:34} {n:>4} {above / args.reps:>8.3f} {below / args.reps:>8.3f}", flush=True)


if __name__ == "__main__":
    main()
