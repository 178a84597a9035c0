"""Exact coverage and mean width of 95% intervals for a paired 0/1 change, assay's beside the peers a statistician
would reach for, by enumerating every outcome (no simulation).

    .venv/bin/python bench/paired_peers.py

Each question falls in one of four cells: hit in both runs (probability p_both), won (hit only in the candidate),
lost (hit only in the baseline), missed in both. Every table (a, b, c, d) of n questions is weighed by its
multinomial probability; coverage is the total weight of the tables whose interval holds the true change
p_won - p_lost, width the weighted mean width. The intervals (Fagerland, Lydersen & Laake, Statistics in Medicine
33:2850, 2014, recommend the first three):

- assay: Tango's score interval (assay.verdicts.inference, what every comparison prints);
- Newcombe's hybrid score interval (Newcombe 1998, method 10: Wilson intervals of both runs' hit rates combined
  with the phi coefficient of the 2x2 table);
- Bonett & Price's adjusted Wald interval (2012: a Wald interval after adding 1 won and 1 lost question);
- the plain Wald interval (for scale: what a textbook gives).

A method "reaches 93%" in a cell when its exact coverage is at least 0.93 there; the last column is assay's width
over the narrowest method that reaches 93% in that cell.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import multinomial, norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.verdicts.inference import infer  # noqa: E402

Z = norm.ppf(0.975)
CELLS = [(0.5, 0.15, 0.05), (0.5, 0.10, 0.08), (0.5, 0.05, 0.05), (0.3, 0.30, 0.10), (0.8, 0.03, 0.01),
         (0.2, 0.03, 0.01)]  # (p_both, p_won, p_lost)
SIZES = (10, 30, 56, 100)


def tables(n: int) -> np.ndarray:
    """Every (a, b, c, d) with a + b + c + d = n."""
    out = [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a) for c in range(n + 1 - a - b)]
    return np.array(out, dtype=float)


def wilson(k, n):
    p = k / n
    half = Z * np.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    mid = p + Z * Z / (2 * n)
    return (mid - half) / (1 + Z * Z / n), (mid + half) / (1 + Z * Z / n)


def newcombe(t: np.ndarray, n: int):
    a, b, c, d = t.T
    p_after, p_before = (a + b) / n, (a + c) / n  # hit rates of the candidate and of the baseline
    (l1, u1), (l2, u2) = wilson(a + b, n), wilson(a + c, n)
    den = np.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    phi = np.where(den > 0, (a * d - b * c) / np.where(den > 0, den, 1), 0.0)
    diff = p_after - p_before
    lo = diff - np.sqrt(np.maximum(0, (p_after - l1) ** 2 - 2 * phi * (p_after - l1) * (u2 - p_before)
                                   + (u2 - p_before) ** 2))
    hi = diff + np.sqrt(np.maximum(0, (u1 - p_after) ** 2 - 2 * phi * (u1 - p_after) * (p_before - l2)
                                   + (p_before - l2) ** 2))
    return lo, hi


def wald(t: np.ndarray, n: int, add: float = 0.0):
    b, c = t[:, 1] + add, t[:, 2] + add
    m = n + 2 * add
    diff = (b - c) / m
    half = Z * np.sqrt(np.maximum(0, (b + c) / m - diff ** 2) / m)
    return np.maximum(-1, diff - half), np.minimum(1, diff + half)


def ours(t: np.ndarray, n: int):
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    lo, hi = np.empty(len(t)), np.empty(len(t))
    for i, (_, b, c, _) in enumerate(t.astype(int)):
        if (b, c) not in cache:
            r = infer([1] * c + [0] * b + [0] * (n - b - c), [0] * c + [1] * b + [0] * (n - b - c))
            cache[(b, c)] = (r.low, r.high)
        lo[i], hi[i] = cache[(b, c)]
    return lo, hi


METHODS = {"assay (Tango)": ours, "Newcombe": newcombe, "Bonett-Price": lambda t, n: wald(t, n, 1.0),
           "Wald": wald}


def main() -> None:
    print("`.venv/bin/python bench/paired_peers.py`\n")
    print("| p_both, p_won, p_lost | n | " + " | ".join(f"{m} cover / width" for m in METHODS)
          + " | assay / narrowest >= 93% |")
    print("|---|---:|" + "---:|" * (len(METHODS) + 1))
    worst = 0.0
    for n in SIZES:
        t = tables(n)
        for both, won, lost in CELLS:
            w = multinomial.pmf(t, n, [both, won, lost, 1 - both - won - lost])
            truth = won - lost
            figures = {}
            for name, method in METHODS.items():
                lo, hi = method(t, n)
                figures[name] = (float(np.sum(w * ((lo <= truth) & (truth <= hi)))), float(np.sum(w * (hi - lo))))
            reaching = [wd for cov, wd in figures.values() if cov >= 0.93]
            ratio = figures["assay (Tango)"][1] / min(reaching) if reaching else float("nan")
            worst = max(worst, ratio)
            print(f"| {both}, {won}, {lost} | {n} | "
                  + " | ".join(f"{c:.3f} / {wd:.3f}" for c, wd in figures.values()) + f" | {ratio:.2f} |", flush=True)
    print(f"\nlargest ratio {worst:.2f}")


if __name__ == "__main__":
    main()
