"""Coverage and width of every 95% interval method assay has or could use, on the values real measures have.

    .venv/bin/python bench/interval_coverage.py [--reps 2000] [--seed 1] [--quick] [--binary-only] [--out FILE.md]

Two tables, written as markdown (to --out, else stdout), with the command that made them:

- **0/1 measures** (Success, Abstain, answer rate, ...): coverage and expected width are *exact* (the
  binomial probabilities of every count, no simulation), at p = 0.02 ... 0.98 and n = 2 ... 1,000, for
  Wald, Wilson, Wilson with continuity correction, Agresti-Coull, Jeffreys, Clopper-Pearson and assay's rule
  (``assay.measures.stats.wilson``: plain Wilson from n = 25 on, continuity-corrected below). Coverage at one
  fixed p jumps up and down with p (the counts are discrete), so each cell is the coverage averaged over p
  within +-20% of the cell's p (81 points), as Brown, Cai and DasGupta (2001) judge intervals, and the table
  gives beside it the lowest coverage over p in 0.01 ... 0.99. A last table takes every n from 2 to 1,000
  (not only the grid's) and lists the n where plain Wilson leaves 93-97% or 1.3x of the narrowest method
  reaching 93% in some cell: the largest of them plus one is where assay's rule switches to plain Wilson.
- **graded measures** (R, P, RR, nDCG, AP, span measures): REPS samples of n values are drawn (numpy
  PCG64 seeded with SEED and the cell) from each distribution; every method gets the same samples, and
  the bootstraps share the 1,000 resampling weights of seed 0, as every interval of a run with seed 0
  does. Coverage is the share of samples whose interval holds the true mean; its Monte Carlo standard
  error is sqrt(c (1 - c) / REPS), 0.0049 at c = 0.95 and REPS = 2,000. Width is the mean width.
  Distributions: parametric mixtures with point masses at 0 and 1 (nDCG-like, ceilings, floors), a
  skewed Beta, Bernoulli values treated as graded, span-like values with small means, and the
  per-question values of the demo run (resampled: `assay demo`'s nDCG@10, RR@10, R@10 at document
  level, SpanRecall@1000tok and SpanPrecision@1000tok, stored in bench/data/demo_values.json, which
  --write-demo-values rewrites from a fresh demo run).

Methods for graded values (each a 95% interval of the mean, clipped to [0, 1]): the t interval,
the percentile bootstrap, BCa, expanded BCa (Hesterberg), bootstrap-t (clipped to Wilson on the sum),
Wilson on the sum (the worst case a value in [0, 1] allows), assay's interval before issue 25 (the
hull of expanded BCa and bootstrap-t, widened by a share u = Wilson(0 of n) of questions that could
score anything), and assay's interval now (``assay.measures.stats.bootstrap_mean``: the same hull,
widened by u = 2 / (n + 2)). Each row ends with the narrowest method that reaches 93% in that cell,
and the summary says, per method, in how many cells it reaches 93-97% and how often it is within 1.3x
of that narrowest width.

A run takes about 13 minutes on one core of a shared 2-core machine at the default 2,000 samples a
cell (771 s, most of it the bootstraps of 2,000 samples of 1,000 values); --quick (300 samples, n up to
100) takes about 25 s; --binary-only (the 0/1 tables, every n from 2 to 1,000 included) about 2 minutes.
docs/benchmarks.md has the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr, ndtri, stdtrit
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from assay.measures.stats import PLAIN_FROM, Z95, _graded, _wilson, _wilson_one, resample_weights, wilson

NS = (2, 3, 5, 10, 20, 50, 100, 300, 1000)
QUICK_NS = (2, 5, 10, 20, 50, 100)
PS = (0.02, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.98)
SAMPLES = 1000
FLOOR, CEILING, WIDTH_RATIO = 0.93, 0.97, 1.3
DEMO_VALUES = Path(__file__).parent / "data" / "demo_values.json"


# --- 0/1 values: exact ------------------------------------------------------------------------------------

def _clip(low, high):
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def wald(k, n):
    p = k / n
    half = Z95 * np.sqrt(p * (1 - p) / n)
    return _clip(p - half, p + half)


def agresti_coull(k, n):
    total = n + Z95**2
    p = (k + Z95**2 / 2) / total
    half = Z95 * np.sqrt(p * (1 - p) / total)
    return _clip(p - half, p + half)


def jeffreys(k, n):
    low = np.where(k > 0, beta_dist.ppf(0.025, k + 0.5, n - k + 0.5), 0.0)
    high = np.where(k < n, beta_dist.ppf(0.975, k + 0.5, n - k + 0.5), 1.0)
    return low, high


def assay_rule(k, n):
    """assay.measures.stats.wilson itself, count by count: plain Wilson from PLAIN_FROM on, corrected below."""
    low, high = zip(*(wilson(int(c), n) for c in k))
    return np.array(low), np.array(high)


def clopper_pearson(k, n):
    low = np.where(k > 0, beta_dist.ppf(0.025, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, beta_dist.ppf(0.975, k + 1, np.maximum(n - k, 1)), 1.0)
    return low, high


BINARY = {
    "Wald": wald,
    "Wilson": lambda k, n: _wilson(k.astype(float), n, Z95, False),
    "Wilson-cc": lambda k, n: _wilson(k.astype(float), n, Z95, True),
    "Agresti-Coull": agresti_coull,
    "Jeffreys": jeffreys,
    "Clopper-Pearson": clopper_pearson,
}
ASSAY_BINARY = f"assay (Wilson, cc below n = {PLAIN_FROM})"
BINARY[ASSAY_BINARY] = assay_rule


def binary_cells(ns):
    """{(p, n, method): (coverage averaged over p +-20%, expected width at p)} and {(n, method): lowest coverage}."""
    cells, lowest = {}, {}
    grid = np.linspace(0.01, 0.99, 99)
    for n in ns:
        k = np.arange(n + 1)
        for name, method in BINARY.items():
            low, high = method(k, n)

            def coverage(p):
                return float(binom.pmf(k, n, p)[(low <= p) & (p <= high)].sum())

            for p in PS:
                near = np.linspace(p * 0.8, min(p * 1.2, 0.999), 81)
                cells[p, n, name] = (float(np.mean([coverage(q) for q in near])),
                                     float(binom.pmf(k, n, p) @ (high - low)))
            lowest[n, name] = min(coverage(p) for p in grid)
    return cells, lowest


def plain_wilson_every_n(max_n=1000):
    """Plain Wilson at every n from 2 to ``max_n``, each p of the grid: {n: [(p, coverage, width / narrowest)]} of the
    cells where it leaves 93-97% or is over 1.3x the narrowest method reaching 93%, and (lowest, highest coverage,
    largest width ratio) over n >= the first n from which no cell fails. The same exact sums as ``binary_cells``,
    all 81 x 9 points of one n at once."""
    near = np.concatenate([np.linspace(p * 0.8, min(p * 1.2, 0.999), 81) for p in PS])
    methods = {m: f for m, f in BINARY.items() if m != ASSAY_BINARY}
    failing, kept = {}, []
    for n in range(2, max_n + 1):
        k = np.arange(n + 1)
        pmf_near = binom.pmf(k[None, :], n, near[:, None])
        pmf_at = binom.pmf(k[None, :], n, np.array(PS)[:, None])
        cov, width = {}, {}
        for name, method in methods.items():
            low, high = method(k, n)
            inside = (low[None, :] <= near[:, None]) & (near[:, None] <= high[None, :])
            cov[name] = (pmf_near * inside).sum(axis=1).reshape(len(PS), 81).mean(axis=1)
            width[name] = pmf_at @ (high - low)
        for i, p in enumerate(PS):
            narrowest = min(width[m][i] for m in methods if cov[m][i] >= FLOOR)
            c, ratio = cov["Wilson"][i], width["Wilson"][i] / narrowest
            kept.append((n, c, ratio))
            if not (FLOOR <= c <= CEILING and ratio <= WIDTH_RATIO):
                failing.setdefault(n, []).append((p, c, ratio))
    start = max(failing) + 1 if failing else 2
    after = [(c, r) for n, c, r in kept if n >= start]
    return failing, start, (min(c for c, _ in after), max(c for c, _ in after), max(r for _, r in after))


# --- graded values: simulated ----------------------------------------------------------------------------

def inflated(p0, p1, a, b):
    """0 with probability p0, 1 with p1, else Beta(a, b): the shape of per-question RR, nDCG or recall."""
    def draw(rng, size):
        u = rng.random(size)
        return np.where(u < p0, 0.0, np.where(u < p0 + p1, 1.0, rng.beta(a, b, size)))
    return draw, p1 + (1 - p0 - p1) * a / (a + b)


def span_like():
    """Span precision over a budget: a share of questions at 0, most tiny (a short quote among many tokens),
    a few large (a long gold passage). Mean 0.032."""
    def draw(rng, size):
        u = rng.random(size)
        return np.where(u < 0.15, 0.0, np.where(u < 0.93, rng.beta(2, 120, size), rng.beta(1.2, 4, size)))
    return draw, 0.78 * 2 / 122 + 0.07 * 1.2 / 5.2


def empirical(values):
    population = np.asarray(values, dtype=float)
    return (lambda rng, size: rng.choice(population, size=size)), float(population.mean())


def write_demo_values(path: Path = DEMO_VALUES) -> None:
    """Run the demo (``assay demo``'s options over judgments/demo) into a scratch warehouse and write every stored
    measure's per-question values, {"measure:level": [values in question order]}."""
    import tempfile

    from assay.runs.demo import run_options
    from assay.measures.compute import stored_values
    from assay.runs.runner import run
    from assay.store.warehouse import Warehouse

    demo = Path(__file__).resolve().parents[1] / "judgments" / "demo"
    with tempfile.TemporaryDirectory(prefix="assay-coverage-") as scratch:
        with Warehouse.open(Path(scratch) / "w.duckdb") as warehouse:
            record = run(warehouse, demo / "corpus", demo / "judgments.jsonl", run_options())
            stored = stored_values(warehouse, record.run_id)
    values: dict[str, list[float]] = {}
    for measure, by_question in sorted(stored.items()):
        for (_, level), value in sorted(by_question.items()):
            values.setdefault(f"{measure}:{level}", []).append(value)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values) + "\n")


def graded_distributions():
    demo = json.loads(DEMO_VALUES.read_text())
    return {
        "nDCG-like (25% at 0, 35% at 1)": inflated(0.25, 0.35, 2, 2),
        "ceiling (85% at 1, 5% at 0)": inflated(0.05, 0.85, 8, 1),
        "floor (85% at 0, 3% at 1)": inflated(0.85, 0.03, 1, 8),
        "skewed Beta(0.5, 5)": ((lambda rng, s: rng.beta(0.5, 5, s)), 0.5 / 5.5),
        "Bernoulli(0.9) as graded": ((lambda rng, s: (rng.random(s) < 0.9).astype(float)), 0.9),
        "Bernoulli(0.1) as graded": ((lambda rng, s: (rng.random(s) < 0.1).astype(float)), 0.1),
        "span-like, small mean": span_like(),
        **{f"demo {name}": empirical(demo[name]) for name in
           ("nDCG@10:chunk", "RR@10:chunk", "R@10:doc", "SpanRecall@1000tok:chunk", "SpanPrecision@1000tok:chunk")},
    }


def graded_intervals(data):
    """{method: (low, high)} for each row of ``data``, every bootstrap from seed 0's resampling weights."""
    rows, n = data.shape
    mean = data.mean(axis=1)
    counts = resample_weights(0, n, SAMPLES)
    dev = data - mean[:, None]
    shift = dev @ counts
    boot = mean[:, None] + shift
    boot_var = np.clip((dev * dev) @ counts - shift**2, 0.0, None) * n / (n - 1)
    tied = np.abs(shift) <= 1e-12
    ordered = np.sort(boot, axis=1)

    def quantiles(levels):
        pos = np.broadcast_to(levels, (rows,)) * (SAMPLES - 1)
        below = np.clip(np.floor(pos).astype(int), 0, SAMPLES - 1)
        above = np.clip(below + 1, 0, SAMPLES - 1)
        at = np.arange(rows)
        return ordered[at, below] * (1 - (pos - below)) + ordered[at, above] * (pos - below)

    out = {}
    se = np.sqrt(data.var(axis=1, ddof=1) / n)
    t = stdtrit(n - 1, 0.975)
    out["t"] = _clip(mean - t * se, mean + t * se)
    out["percentile"] = (quantiles(0.025), quantiles(0.975))
    z0 = ndtri(np.clip(((shift < 0) & ~tied).sum(1) / SAMPLES + 0.5 * tied.sum(1) / SAMPLES,
                       0.5 / SAMPLES, 1 - 0.5 / SAMPLES))
    ss = (dev**2).sum(axis=1)
    accel = np.where(ss > 0, (dev**3).sum(axis=1) / (6 * np.where(ss > 0, ss, 1.0) ** 1.5), 0.0)

    def bca(half_alpha):
        def level(zq):
            w = z0 + zq
            den = 1 - accel * w
            return np.where(den > 0, ndtr(z0 + w / np.where(den > 0, den, 1.0)), zq > 0)
        return quantiles(level(ndtri(half_alpha))), quantiles(level(-ndtri(half_alpha)))

    out["BCa"] = bca(0.025)
    out["expanded BCa"] = bca(ndtr(-np.sqrt(n / (n - 1)) * t))
    worst = _wilson(data.sum(axis=1), n, Z95)
    wl, wh = _wilson(boot * n, n, Z95)
    boot_se = np.where(boot_var > 1e-12, np.sqrt(boot_var / n), (wh - wl) / (2 * Z95))
    pivots = np.sort(np.where(tied, 0.0, shift) / boot_se, axis=1)
    pivot_at = lambda q: np.quantile(pivots, q, axis=1)  # noqa: E731
    out["bootstrap-t"] = (np.maximum(mean - pivot_at(0.975) * se, worst[0]),
                          np.minimum(mean - pivot_at(0.025) * se, worst[1]))
    out["Wilson on the sum"] = worst
    flat = np.all(data == data[:, :1], axis=1)
    u = _wilson_one(0.0, n, Z95)[1]
    hull_low = np.minimum(out["expanded BCa"][0], out["bootstrap-t"][0])
    hull_high = np.maximum(out["expanded BCa"][1], out["bootstrap-t"][1])
    before = (np.clip(np.minimum(hull_low, mean * (1 - u)), 0, mean), np.clip(np.maximum(hull_high, mean + (1 - mean) * u), mean, 1))
    out["assay before (u = Wilson 0 of n)"] = (np.where(flat, mean * (1 - u), before[0]),
                                               np.where(flat, mean + (1 - mean) * u, before[1]))
    out["assay (u = 2/(n+2))"] = _graded(data, 0, SAMPLES)
    return out


def graded_cells(ns, reps, seed):
    cells = {}
    for index, (name, (draw, truth)) in enumerate(graded_distributions().items()):
        for n in ns:
            rng = np.random.default_rng([seed, index, n])
            data = draw(rng, (reps, n))
            for method, (low, high) in graded_intervals(data).items():
                # a bound within 1e-12 of the truth holds it (rounding in a mean of values equal to the truth)
                held = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
                cells[name, n, method] = (float(held.mean()), float(np.mean(high - low)))
    return cells


# --- tables ----------------------------------------------------------------------------------------------

def _narrowest(cells, row, methods):
    reaching = [(cells[(*row, m)][1], m) for m in methods if cells[(*row, m)][0] >= FLOOR]
    return min(reaching) if reaching else None


def table(cells, rows, methods, label):
    lines = [f"| {label} | n | " + " | ".join(methods) + " | narrowest reaching 93% |",
             "|---|---|" + "---|" * (len(methods) + 1)]
    for row in rows:
        best = _narrowest(cells, row, methods)
        parts = []
        for m in methods:
            cov, width = cells[(*row, m)]
            parts.append(f"{cov:.3f} ({width:.3f})" if FLOOR <= cov else f"*{cov:.3f}* ({width:.3f})")
        lines.append(f"| {row[0]} | {row[1]} | " + " | ".join(parts) + f" | {best[1] if best else 'none'} |")
    return "\n".join(lines)


def summary(cells, rows, methods, min_n=1):
    """Per method: cells (n >= min_n) at 93-97%, at >= 93%, and within 1.3x of the narrowest reaching 93%."""
    kept = [r for r in rows if r[1] >= min_n]
    lines = ["| method | 93-97% | at least 93% | within 1.3x of the narrowest reaching 93% | lowest coverage |",
             "|---|---|---|---|---|"]
    for m in methods:
        band = sum(FLOOR <= cells[(*r, m)][0] <= CEILING for r in kept)
        above = sum(cells[(*r, m)][0] >= FLOOR for r in kept)
        close = 0
        for r in kept:
            best = _narrowest(cells, r, methods)
            close += best is not None and cells[(*r, m)][0] >= FLOOR and cells[(*r, m)][1] <= WIDTH_RATIO * best[0]
        lowest = min(cells[(*r, m)][0] for r in kept)
        lines.append(f"| {m} | {band}/{len(kept)} | {above}/{len(kept)} | {close}/{len(kept)} | {lowest:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="samples a graded cell (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulated samples (default 1)")
    parser.add_argument("--quick", action="store_true", help="300 samples a cell, n up to 100")
    parser.add_argument("--binary-only", action="store_true",
                        help="only the 0/1 tables (exact), with plain Wilson at every n from 2 to 1,000")
    parser.add_argument("--out", type=Path, help="write the markdown here (default: stdout)")
    parser.add_argument("--write-demo-values", action="store_true",
                        help=f"rewrite {DEMO_VALUES.relative_to(Path(__file__).parents[1])} from a demo run, then stop")
    args = parser.parse_args(argv)
    if args.write_demo_values:
        write_demo_values()
        print(f"wrote {DEMO_VALUES}")
        return 0
    reps, ns = (300, QUICK_NS) if args.quick else (args.reps, NS)
    started = time.perf_counter()
    command = "bench/interval_coverage.py " + " ".join(argv if argv is not None else sys.argv[1:])
    graded = ("0/1 cells only (exact)" if args.binary_only else
              f"graded cells: {reps} samples each, seed {args.seed}, Monte Carlo standard error of a coverage near "
              f"0.95: {np.sqrt(0.95 * 0.05 / reps):.4f}")
    out = [f"<!-- {command.strip()} -->",
           f"Command: `.venv/bin/python {command.strip()}`; {graded}. "
           "Each cell: coverage (mean width); *italic*: below 93%.\n"]

    bcells, lowest = binary_cells(ns)
    bmethods = list(BINARY)
    out.append("### 0/1 values (exact; coverage averaged over p +-20%, width at p)\n")
    out.append(table(bcells, [(p, n) for p in PS for n in ns], bmethods, "p"))
    out.append("\nLowest coverage over p in 0.01 ... 0.99 (exact):\n")
    out.append("| n | " + " | ".join(bmethods) + " |\n|---|" + "---|" * len(bmethods))
    for n in ns:
        out.append(f"| {n} | " + " | ".join(f"{lowest[n, m]:.3f}" for m in bmethods) + " |")
    for min_n in (2, 10):
        out.append(f"\nSummary, 0/1, n >= {min_n}:\n")
        out.append(summary(bcells, [(p, n) for p in PS for n in ns], bmethods, min_n=min_n))
    if args.binary_only:
        failing, start, (lowest_cov, highest_cov, ratio) = plain_wilson_every_n()
        out.append("\nPlain Wilson at every n from 2 to 1,000 (exact): the n where some cell leaves 93-97% or 1.3x "
                   "the narrowest method reaching 93% (coverage, width / narrowest):\n")
        out.append("| n | cells |\n|---|---|")
        for n, cells in failing.items():
            out.append(f"| {n} | " + "; ".join(f"p = {p}: {c:.3f}, {r:.2f}x" for p, c, r in cells) + " |")
        out.append(f"\nFrom n = {start} on (assay switches at {PLAIN_FROM}): coverage {lowest_cov:.4f} ... "
                   f"{highest_cov:.4f} in every cell, at most {ratio:.3f}x the narrowest.")
        return _emit(out, started, args.out)

    gcells = graded_cells(ns, reps, args.seed)
    names = list(graded_distributions())
    gmethods = sorted({key[2] for key in gcells}, key=list(graded_intervals(np.array([[0.0, 1.0]]))).index)
    out.append("\n### graded values (simulated)\n")
    out.append(table(gcells, [(d, n) for d in names for n in ns], gmethods, "distribution"))
    for min_n in (2, 5, 50):
        out.append(f"\nSummary, graded, n >= {min_n}:\n")
        out.append(summary(gcells, [(d, n) for d in names for n in ns], gmethods, min_n=min_n))
    return _emit(out, started, args.out)


def _emit(out: list[str], started: float, path) -> int:
    """The tables with the run time, to ``path`` (--out) or stdout."""
    out.append(f"\n{time.perf_counter() - started:.0f} s")
    text = "\n".join(out) + "\n"
    if path:
        path.write_text(text)
        print(f"wrote {path}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
