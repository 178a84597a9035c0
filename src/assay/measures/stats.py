"""Intervals for a mean over questions: Wilson for 0/1 values, a seeded bootstrap for graded ones.

Every interval here is a 95% interval for the mean of per-question values that lie in [0, 1]
(paired deltas in [-1, 1] are mapped into [0, 1] first). None is ever zero-width: a share s of
questions could score anything unseen, so a mean m is always widened to at least
[m (1 - s), m + (1 - m) s]: s = ``wilson(0, n, continuity=True)``'s upper bound (an outcome never seen in n
questions) where every value is equal, so that at the ceiling or floor it is exactly the continuity-corrected
Wilson interval for n of n (or 0 of n), the one 0/1 measures get below 25 questions (from 25 on they get plain
Wilson, narrower), and s = 2 / (n + 2) where the sample has spread (``unseen_share``). No interval is wider
than the worst case a value in [0, 1] allows (Bernoulli variance: Wilson on the sum).
``bench/interval_coverage.py`` measures how often each interval covers the true mean.
"""

from __future__ import annotations

Z95 = 1.959963984540054
ALPHA = 0.05
TOLERANCE = 1e-12


PLAIN_FROM = 25
"""From this many observations on, a 0/1 measure's interval is plain Wilson; below it, continuity-corrected."""


def wilson(successes: float, n: int, z: float = Z95, continuity: bool | None = None) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion: plain from ``PLAIN_FROM`` = 25 observations on,
    continuity-corrected below.

    Plain Wilson solves ``(p - pi)^2 = z^2 pi (1 - pi) / n`` for pi, with p = successes/n:
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``. The continuity correction
    (Newcombe 1998) takes the lower root at p - 1/2n and the upper root at p + 1/2n, with 0 and 1
    where those fall outside (0, 1). ``continuity`` True or False forces one; None (the default) chooses by n.

    Why the rule: coverage of any interval that is not randomised jumps up and down with p (the counts are
    discrete), so it is judged, as Brown, Cai and DasGupta (2001, Statistical Science 16:101-133, "Interval
    Estimation for a Binomial Proportion") judge it, averaged over p near each value: exactly (binomial sums) over
    p within +-20% of each of p = 0.02, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.98 (bench/interval_coverage.py).
    Plain Wilson, which they recommend, then covers 93.2-96.7% at every n from 25 to 1,000 and is within 1.24x
    of the narrowest of Wald, Agresti-Coull, Jeffreys and Clopper-Pearson that reaches 93%. At n = 22, 23, 24 it
    covers 92.3-92.9% at p = 0.02, and at n = 6-8 only 87-89%, so 25 is the smallest n from which it holds for
    every larger n (the corrected interval there is 7-18% wider than plain at n = 50, 2-6% at 1,000, and above 97%
    in 692 of those 8,784 cells). Below 25 none of these methods is both in 93-97% and within 1.3x in every cell
    of an n, except plain Wilson at n = 14-21 (one switch, not two, keeps the rule plain); the corrected interval
    covers 96.0-100% there (and at least 95% at every single p), which keeps slices of a few questions
    conservative, at up to 1.51x the narrowest width reaching 93%.
    ``successes`` may be fractional (a sum of graded values).
    """
    if n <= 0:
        raise ValueError("no observations")
    if continuity is None:
        continuity = n < PLAIN_FROM
    return _wilson_one(float(successes), n, z, continuity)


def _wilson_one(successes: float, n: int, z: float, continuity: bool = True) -> tuple[float, float]:
    """``_wilson`` for one count in plain floats: the same operations in the same order, each rounded as
    numpy rounds it (IEEE doubles; sqrt is correctly rounded in both), so the same bounds bit for bit, and
    a report or gate of 0/1 measures needs no numpy."""
    import math

    shift = 0.5 if continuity else 0.0
    denom = 1 + z * z / n

    def root(p, sign):
        p = min(max(p, 0.0), 1.0)
        centre = (p + z * z / (2 * n)) / denom
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return min(max(centre + sign * half, 0.0), 1.0)

    low = root((successes - shift) / n, -1) if successes - shift > 0 else 0.0
    high = root((successes + shift) / n, +1) if successes + shift < n else 1.0
    return low, high


def _wilson(successes, n: int, z: float, continuity: bool = True):
    """Wilson bounds for an array of success counts out of ``n`` each."""
    import numpy as np

    shift = 0.5 if continuity else 0.0
    denom = 1 + z * z / n

    def root(p, sign):
        p = np.clip(p, 0.0, 1.0)
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return np.clip(centre + sign * half, 0.0, 1.0)

    low = np.where(successes - shift > 0, root((successes - shift) / n, -1), 0.0)
    high = np.where(successes + shift < n, root((successes + shift) / n, +1), 1.0)
    return low, high


def bootstrap_mean(values, seed: int, samples: int = 1000) -> tuple[float, float]:
    """95% interval of the mean of graded values in [0, 1], resampling questions with replacement.

    With no spread in the sample (all values equal to v, n=1 included) the interval is
    ``[v (1 - u), v + (1 - v) u]`` with ``u = wilson(0, n, continuity=True)[1]``: all the sample says is that a
    share up to u of questions could score anything. At v = 1 or 0 this is ``wilson(n, n, continuity=True)`` or
    ``wilson(0, n, continuity=True)``, so a graded measure at the ceiling is never narrower than a 0/1 one (the
    same interval below 25 questions, wider than plain Wilson from 25 on).

    Otherwise it is the hull (lower of the lows, higher of the highs) of that same widening and two
    bootstrap intervals computed from the same ``samples`` resamples, each good where the other is
    weak:

    - expanded BCa (Efron 1987; Hesterberg 2015): BCa quantiles taken at alpha' instead of alpha,
      ``alpha'/2 = Phi(-sqrt(n/(n-1)) t_{n-1, 1-alpha/2})``, so small samples are not too narrow.
      Handles point masses at 0 and 1 (the usual shape of RR or nDCG) well.
    - bootstrap-t: ``T* = (mean* - mean) / se*`` with ``se* = sd*/sqrt(n)``, interval
      ``[mean - T*_{0.975} se, mean - T*_{0.025} se]``. Extrapolates past the sample, which
      skewed samples need (Beta(0.5, 5) at n=10). A resample with no spread is studentized by
      the standard error its worst-case Wilson interval implies (width / 2z), not by zero. When a
      few large values dominate (span precision: most questions near 0, a few near 1) it
      extrapolates without bound, so it is clipped to ``wilson(sum(values), n, continuity=True)``, the widest
      interval any distribution on [0, 1] with this mean needs.

    Finally the interval reaches at least ``[mean (1 - s), mean + (1 - mean) s]`` with
    ``s = unseen_share(n) = 2 / (n + 2)``: a sample of n that shows no 0 cannot rule out a share s of
    questions scoring 0 (nor, showing no 1, a share s scoring 1). This binds near 0 and 1, where the
    bootstrap sees little spread, and for skewed samples of fewer than about 50 questions (span measures
    with small means), where the bootstrap covers 60-90% alone; 9 ones and a 0.95 get [0.829, 1].
    Before issue 25 the share was the 95% bound ``wilson(0, n, continuity=True)[1]`` here too (0.080 at n = 56 against
    0.034), which held every cell of bench/interval_coverage.py at 97-100% and made SpanPrecision@1000tok
    0.036 read [0.021, 0.113] on the demo; it reads [0.021, 0.084] now (docs/benchmarks.md has the table).

    Every bound is finite. At n = 2 (values a < b) ``alpha'/2`` is about 1e-72, so the BCa part is
    [a, b], the range of the resampled means, and the bootstrap-t pivots are those of the resamples
    (a, a) and (b, b), each holding a quarter of the mass: the interval is the hull of [a, b], that
    t interval clipped to ``wilson(a + b, 2)`` (continuity-corrected) and the widening above with s = 1/2
    (tests/measures/test_degenerate_intervals.py enumerates it).

    The generator is numpy's PCG64 seeded with ``seed``, so a run's figures are reproducible.
    """
    return _bootstrap(values, seed, samples)


def _bootstrap(values, seed, samples: int, paired: bool = False) -> tuple[float, float]:
    low, high = _graded(_unit_values(values)[None, :], seed, samples, paired=paired)
    return float(low[0]), float(high[0])


def paired_bootstrap_delta(before, after, seed: int, samples: int = 1000) -> tuple[float, float]:
    """95% interval of mean(after - before), resampling questions (pairs kept together).

    A delta d lies in [-1, 1]; it is mapped to (d + 1) / 2 in [0, 1], given the interval of
    ``bootstrap_mean`` there, and mapped back. Identical runs therefore get [-u, u] with
    ``u = wilson(0, n, continuity=True)[1]`` (0.08 at n=56), not [0, 0].
    """
    import numpy as np

    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != after.shape:
        raise ValueError(f"paired values differ in length: {before.size} before, {after.size} after")
    low, high = _bootstrap((after - before + 1) / 2, seed, samples, paired=True)
    return 2 * low - 1, 2 * high - 1


def paired_bootstrap_deltas(pairs, seed: int, samples: int = 1000) -> list[tuple[float, float]]:
    """``paired_bootstrap_delta(before, after, seed, samples)`` of each ``(before, after)``, the same floats,
    computed together (``intervals``)."""
    import numpy as np

    mapped = []
    for before, after in pairs:
        before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
        if before.shape != after.shape:
            raise ValueError(f"paired values differ in length: {before.size} before, {after.size} after")
        mapped.append((after - before + 1) / 2)
    return [(2 * low - 1, 2 * high - 1) for low, high in _bootstraps(mapped, [seed] * len(mapped), samples, paired=True)]


def interval(values, kind: str, seed: int, samples: int = 1000) -> tuple[float, float]:
    """The interval of a measure's per-question values: kind is 'wilson' (0/1) or 'bootstrap'."""
    if kind == "wilson":
        return wilson(sum(values), len(values))
    if kind == "bootstrap":
        return bootstrap_mean(values, seed=seed, samples=samples)
    raise ValueError(f"unknown interval kind {kind!r}: 'wilson' or 'bootstrap'")


def intervals(samples_of_values, kind: str, seeds, samples: int = 1000) -> list[tuple[float, float]]:
    """``interval(values, kind, seed, samples)`` for each ``values`` of ``samples_of_values`` and its seed in
    ``seeds``, the same floats: the bootstraps of one seed and size share their resampling weights and run as
    the rows of one computation (a history's runs, a report's measures and levels over one slice)."""
    samples_of_values, seeds = list(samples_of_values), list(seeds)
    if kind != "bootstrap":
        return [interval(values, kind, seed, samples) for values, seed in zip(samples_of_values, seeds)]
    return _bootstraps(samples_of_values, seeds, samples)


def _bootstraps(samples_of_values, seeds, samples: int, paired: bool = False) -> list[tuple[float, float]]:
    import numpy as np

    out: list = [None] * len(samples_of_values)
    together: dict[tuple, list] = {}
    for i, (values, seed) in enumerate(zip(samples_of_values, seeds)):
        data = _unit_values(values)
        if data.size == 1 or np.all(data == data[0]) or not isinstance(seed, (int, np.integer)):
            out[i] = _bootstrap(data, seed, samples, paired)
        else:
            together.setdefault((int(seed), data.size), []).append((i, data))
    for (seed, _), group in together.items():
        low, high = _graded(np.vstack([data for _, data in group]), seed, samples, paired=paired)
        for (i, _), lo, hi in zip(group, low, high):
            out[i] = (float(lo), float(hi))
    return out


def _unit_values(values):
    import numpy as np

    data = np.asarray(values, dtype=float).ravel()
    if data.size == 0:
        raise ValueError("no observations")
    if not np.all((data >= -1e-9) & (data <= 1 + 1e-9)):
        raise ValueError("values must lie in [0, 1] (the worst case assumes bounded values)")
    return np.clip(data, 0.0, 1.0)


def _graded(data, rng, samples: int, alpha: float = ALPHA, paired: bool = False):
    """``bootstrap_mean`` for each row of ``data`` (rows: samples of n values), as (low, high) arrays.

    ``paired``: the rows are paired deltas mapped into [0, 1] (``paired_bootstrap_delta``); they keep the 95%
    share ``wilson(0, n, continuity=True)`` for samples with spread too, since a mass of unchanged questions at 0.5
    is what they usually hold, and with the smaller share they cover 91% at n = 30 (tests/measures/test_coverage.py).

    All rows share one set of resampling indices, and each row's figures are those of a call for it alone. ``rng``
    is a numpy Generator, or an int seed: then the resampling weights come from ``resample_weights`` (drawn
    once per seed, n and samples, and kept), the very numbers a Generator seeded with it gives.
    """
    import numpy as np

    ndtr, ndtri, stdtrit = _normal_and_t()
    rows, n = data.shape
    mean = data.mean(axis=1)
    flat = np.all(data == data[:, :1], axis=1)
    # where every value is equal, all the sample says is that a share up to `unseen` of questions could score
    # anything (the 95% bound on an event never seen in n draws)
    unseen = _wilson_one(0.0, n, Z95)[1]
    flat_low, flat_high = mean * (1 - unseen), mean + (1 - mean) * unseen
    if n == 1 or flat.all():
        return flat_low, flat_high
    # with spread, the bootstrap needs the widening only where it sees no tail: a share 2 / (n + 2) (unseen_share)
    share = unseen if paired else unseen_share(n)
    edge_low, edge_high = mean * (1 - share), mean + (1 - mean) * share
    # no interval is wider than the widest a value in [0, 1] allows: Bernoulli variance, Wilson on the sum
    worst_low, worst_high = _wilson(data.sum(axis=1), n, Z95)

    # resampled means and second moments as one matrix product with per-resample counts
    if isinstance(rng, (int, np.integer)):
        counts = resample_weights(int(rng), n, samples)
    else:
        counts = _weights(rng, n, samples)
    dev = data - mean[:, None]
    # resampled mean minus the sample's, centred to keep rounding small; row by row, each row's product the one a
    # call for that row alone makes (a product over several rows rounds differently)
    boot_shift = _rows_times(dev, counts)
    boot_mean = mean[:, None] + boot_shift
    boot_var = np.clip(_rows_times(dev * dev, counts) - boot_shift**2, 0.0, None) * n / (n - 1)
    # a matrix product rounds differently from a sum: equal means differ by ~1e-16, flat resamples get ~1e-17
    tied = np.abs(boot_shift) <= TOLERANCE
    ordered = np.sort(boot_mean, axis=1)

    # expanded BCa
    z0 = ndtri(np.clip(((boot_shift < 0) & ~tied).sum(1) / samples + 0.5 * tied.sum(1) / samples,
                       0.5 / samples, 1 - 0.5 / samples))
    ss = (dev**2).sum(axis=1)
    accel = np.where(ss > 0, (dev**3).sum(axis=1) / (6 * np.where(ss > 0, ss, 1.0) ** 1.5), 0.0)
    half_alpha = ndtr(-np.sqrt(n / (n - 1)) * stdtrit(n - 1, 1 - alpha / 2))

    def bca_level(zq, if_degenerate):
        w = z0 + zq
        den = 1 - accel * w
        return np.where(den > 0, ndtr(z0 + w / np.where(den > 0, den, 1.0)), if_degenerate)

    # the upper level's z is -z of the lower (the normal is symmetric), not ndtri(1 - alpha'/2): at n = 2
    # alpha'/2 is ~1e-72, 1 - alpha'/2 rounds to 1 and ndtri(1) is inf (then 0 * inf, a NaN bound)
    z_half_alpha = ndtri(half_alpha)
    bca_low = _row_quantiles(ordered, bca_level(z_half_alpha, 0.0))
    bca_high = _row_quantiles(ordered, bca_level(-z_half_alpha, 1.0))

    # bootstrap-t
    se = np.sqrt(data.var(axis=1, ddof=1) / n)
    wl, wh = _wilson(boot_mean * n, n, Z95)
    boot_se = np.where(boot_var > TOLERANCE, np.sqrt(boot_var / n), (wh - wl) / (2 * Z95))
    pivots = np.sort(np.where(tied, 0.0, boot_shift) / boot_se, axis=1)
    t_low = mean - _row_quantiles(pivots, 1 - alpha / 2) * se
    t_high = mean - _row_quantiles(pivots, alpha / 2) * se

    # bootstrap-t extrapolates without bound when a few large values dominate: never past the worst case
    t_low, t_high = np.maximum(t_low, worst_low), np.minimum(t_high, worst_high)
    low = np.clip(np.minimum.reduce([bca_low, t_low, edge_low]), 0.0, mean)
    high = np.clip(np.maximum.reduce([bca_high, t_high, edge_high]), mean, 1.0)
    return np.where(flat, flat_low, low), np.where(flat, flat_high, high)


def unseen_share(n: int) -> float:
    """The share of questions a graded interval with spread allows to score anything unseen: 2 / (n + 2).

    It is plain Wilson's upper bound for 0 of n at z = sqrt(2) (z^2 / (n + z^2)), a one-sided 92% bound, where
    a sample with no spread gets the 95% one (continuity-corrected Wilson, as 0/1 measures below 25 questions).
    The bootstrap's own interval covers heavy tails (span measures with small means) and ceilings only from
    about 50 questions; below that this widening is what covers them. The coverage simulation chose it: of
    z = 1, sqrt(2) and 1.96, z = 1 (1 / (n + 1)) left a ceiling distribution at 80% with n = 20, and sqrt(2) keeps
    all 84 cells of ``bench/interval_coverage.py`` with n >= 5 at 93% or more (one at 92.9% with a second seed), each within
    1.3x of the narrowest method that reaches 93% (docs/benchmarks.md).
    """
    return 2.0 / (n + 2)


def _rows_times(rows, matrix):
    """``rows @ matrix``, one row at a time."""
    import numpy as np

    if len(rows) == 1:
        return rows @ matrix
    return np.concatenate([rows[i:i + 1] @ matrix for i in range(len(rows))])


_KEPT_BYTES = 256 << 20
"""Resampling weights kept between calls, at most (1,000 resamples of 1,000 questions take 8 MB)."""
_kept: dict = {}


def resample_weights(seed: int, n: int, samples: int):
    """The bootstrap's resampling weights for ``seed``, ``n`` questions and ``samples`` resamples: an (n, samples)
    array whose column j holds how often each question is drawn in resample j, divided by n.

    Drawing them is most of an interval's cost, and every interval of a run (each measure, level and slice of
    one size), each run of a history with the same seed and each paired delta of a comparison draws the same
    ones: they are kept, read-only, the least recently used dropped past ``_KEPT_BYTES``."""
    key = (seed, n, samples)
    weights = _kept.pop(key, None)
    if weights is None:
        import numpy as np

        weights = _weights(np.random.default_rng(seed), n, samples)
        weights.flags.writeable = False
        if weights.nbytes > _KEPT_BYTES:
            return weights
        while _kept and sum(w.nbytes for w in _kept.values()) + weights.nbytes > _KEPT_BYTES:
            _kept.pop(next(iter(_kept)))
    _kept[key] = weights  # last: the most recently used
    return weights


def _weights(rng, n: int, samples: int):
    import numpy as np

    idx = rng.integers(0, n, size=(samples, n))
    counts = np.bincount((np.arange(samples)[:, None] * n + idx).ravel(), minlength=samples * n)
    return counts.reshape(samples, n).T / n


def _normal_and_t():
    """scipy.special's ndtr, ndtri and stdtrit: what scipy.stats' norm.cdf, norm.ppf and t.ppf compute behind
    their argument checks, so the same floats.

    They are ufuncs of the compiled module scipy.special._ufuncs. The package scipy.special around it wraps
    each of its ~300 functions for other array libraries and parses their docstrings on import, three times
    numpy's own import, more than a whole `assay report` may take; the packages above it (scipy, scipy._lib)
    load a test runner with subprocess and shutil. So the packages not imported yet are bare stand-ins while the
    compiled module (and the one it needs, scipy._lib._ccallback) loads, and are then taken away (a later
    ``import scipy.special`` runs as usual and finds the modules loaded); anything unexpected falls back to the
    plain import.

    scipy is not in assay's core install: without it, ``assay.measures.special`` computes the three functions
    (intervals within 5e-15 of scipy's; see that module).
    """
    import importlib.util
    import sys

    special = sys.modules.get("scipy.special") or sys.modules.get("scipy.special._ufuncs")
    if special is None and importlib.util.find_spec("scipy") is None:
        from assay.measures import special
    elif special is None:
        try:
            special = _bare_ufuncs()
        except Exception:  # another scipy layout: pay for the package
            import scipy.special as special
    return special.ndtr, special.ndtri, special.stdtrit


def _bare_ufuncs():
    import importlib
    import importlib.util
    import sys
    import types

    bare = {}
    try:
        for name in ("scipy", "scipy._lib", "scipy.special"):
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            module = types.ModuleType(name)
            module.__spec__, module.__path__ = spec, list(spec.submodule_search_locations)
            sys.modules[name] = bare[name] = module
        return importlib.import_module("scipy.special._ufuncs")
    finally:
        for name, module in bare.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _row_quantiles(ordered, q):
    """Per-row quantile ``q[i]`` of the sorted rows, interpolated linearly as numpy.quantile does."""
    import numpy as np

    rows, count = ordered.shape
    pos = np.broadcast_to(np.asarray(q, dtype=float), (rows,)) * (count - 1)
    below = np.clip(np.floor(pos).astype(int), 0, count - 1)
    above = np.clip(below + 1, 0, count - 1)
    frac = pos - below
    at = np.arange(rows)
    return ordered[at, below] * (1 - frac) + ordered[at, above] * frac
