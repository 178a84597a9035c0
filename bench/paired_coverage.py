"""Coverage and width of the paired inference every comparison uses (assay.verdicts.inference: Tango's score
interval for 0/1 changes, the score interval with one pseudo-question for graded ones), by simulation.

    .venv/bin/python bench/paired_coverage.py [--reps 2000] [--seed 1]

Each cell draws ``reps`` paired samples of n questions with a known mean change, computes the 95% interval of the
change as `assay compare` does, and counts how often it holds the true change (coverage, with its Monte Carlo
standard error), its mean width, and how often one end lies exactly at 0. 0/1 cells: each question is won with
probability p_win, lost with p_lose, else unchanged (d in {+1, -1, 0}). Graded cells: a baseline value on [0, 1]
(a point mass at 0 and at 1 and a uniform middle, as nDCG or RR values look), a candidate that equals it on a
share of the questions (unchanged) and otherwise moves by a shifted, clipped normal step. The cells where most
questions are unchanged at small n are the ones the earlier sign-flip interval failed (26% and 59% at n = 10).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.verdicts.inference import infer  # noqa: E402

BINARY = [(0.15, 0.05), (0.10, 0.08), (0.05, 0.05), (0.30, 0.10), (0.03, 0.01)]
GRADED = [(0.6, 0.05), (0.3, 0.0), (0.8, 0.02), (0.5, -0.1), (0.95, 0.0), (0.9, 0.05)]  # (share unchanged, mean step)
SIZES = (10, 30, 56, 100, 300)


def binary_cell(rng, n, p_win, p_lose):
    u = rng.random(n)
    d = np.where(u < p_win, 1, np.where(u < p_win + p_lose, -1, 0))
    return (d == -1).astype(float).tolist(), (d == 1).astype(float).tolist(), p_win - p_lose


def graded_population(rng, unchanged, step, size=200_000):
    kind = rng.random(size)
    base = np.where(kind < 0.2, 0.0, np.where(kind < 0.35, 1.0, rng.random(size)))
    moved = np.clip(base + rng.normal(step, 0.25, size), 0.0, 1.0)
    after = np.where(rng.random(size) < unchanged, base, moved)
    return base, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"`.venv/bin/python bench/paired_coverage.py --reps {args.reps} --seed {args.seed}`\n")
    print("| kind | cell | n | coverage | MC s.e. | mean width | an end at 0 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    start = time.time()
    cells = [("0/1", f"win {w}, lose {lo}", lambda n, w=w, lo=lo: binary_cell(rng, n, w, lo)) for w, lo in BINARY]
    for unchanged, step in GRADED:
        pop_b, pop_a = graded_population(rng, unchanged, step)
        true = float(np.mean(pop_a - pop_b))

        def draw(n, pop_b=pop_b, pop_a=pop_a, true=true):
            i = rng.integers(0, len(pop_b), n)
            return pop_b[i].tolist(), pop_a[i].tolist(), true
        cells.append(("graded", f"{unchanged:.0%} unchanged, step {step:+}", draw))
    worst = 1.0
    for kind, name, draw in cells:
        for n in SIZES:
            hits = width = zero = 0
            for _ in range(args.reps):
                before, after, true = draw(n)
                r = infer(before, after, alpha=0.05)
                hits += r.low <= true <= r.high
                width += r.high - r.low
                zero += r.low == 0.0 or r.high == 0.0
            cover = hits / args.reps
            worst = min(worst, cover)
            se = math.sqrt(cover * (1 - cover) / args.reps)
            print(f"| {kind} | {name} | {n} | {cover:.3f} | {se:.3f} | {width / args.reps:.3f} | "
                  f"{zero / args.reps:.0%} |", flush=True)
    print(f"\nlowest coverage {worst:.3f}; {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
