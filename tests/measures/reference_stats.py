"""The interval and randomization-test code as it stood before the speed work of issue 14 (commit e58268b),
kept verbatim as the reference the faster code must match bit for bit: same inputs, same seed, same floats.

Copied from src/assay/measures/stats.py and significance.py at that commit, with one change (issue 25): the BCa upper
level's quantile is ``norm.isf(alpha'/2)`` where the copy had ``norm.ppf(1 - alpha'/2)``. At n = 2, alpha'/2 is
~1e-72, ``1 - alpha'/2`` rounds to 1 and ``norm.ppf(1)`` is inf: the copy gave two distinct values a NaN upper
bound, and the code under test matched it NaN for NaN. The degenerate samples (n = 1 and 2, all equal, two
values, ceilings) are held instead to computations that share nothing with either: tests/measures/
test_degenerate_intervals.py enumerates the exact bootstrap of n = 2 and checks the rest against Wilson's closed form.
"""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054
ALPHA = 0.05
TOLERANCE = 1e-12
EXACT_MAX_N = 16
_CHUNK_ELEMENTS = 1 << 20
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
    ``[v (1 - u), v + (1 - v) u]`` with ``u = wilson(0, n)[1]``: all the sample says is that a share
    up to u of questions could score anything. At v = 1 or 0 this is ``wilson(n, n)`` or
    ``wilson(0, n)``, so a graded measure at the ceiling is never narrower than a 0/1 one.

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
      extrapolates without bound, so it is clipped to ``wilson(sum(values), n)``, the widest
      interval any distribution on [0, 1] with this mean needs.

    Finally the interval reaches at least ``[mean (1 - u), mean + (1 - mean) u]`` with
    ``u = wilson(0, n)[1]``: a sample of n that shows no 0 cannot rule out a share u of questions
    scoring 0 (nor, showing no 1, a share u scoring 1). This only binds near 0 and 1, where the
    bootstrap sees little spread, and makes 9 ones and a 0.95 about as wide as 10 ones.

    The generator is numpy's PCG64 seeded with ``seed``, so a run's figures are reproducible.
    """
    import numpy as np

    data = _unit_values(values)
    low, high = _graded(data[None, :], np.random.default_rng(seed), samples)
    return float(low[0]), float(high[0])


def paired_bootstrap_delta(before, after, seed: int, samples: int = 1000) -> tuple[float, float]:
    """95% interval of mean(after - before), resampling questions (pairs kept together).

    A delta d lies in [-1, 1]; it is mapped to (d + 1) / 2 in [0, 1], given the interval of
    ``bootstrap_mean`` there, and mapped back. Identical runs therefore get [-u, u] with
    ``u = wilson(0, n)[1]`` (0.08 at n=56), not [0, 0].
    """
    import numpy as np

    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != after.shape:
        raise ValueError(f"paired values differ in length: {before.size} before, {after.size} after")
    data = _unit_values((after - before + 1) / 2)
    low, high = _graded(data[None, :], np.random.default_rng(seed), samples, paired=True)
    return 2 * float(low[0]) - 1, 2 * float(high[0]) - 1


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

    All rows share one set of resampling indices, exactly as separate calls with the same seed would.
    """
    import numpy as np
    from scipy.stats import norm, t

    rows, n = data.shape
    mean = data.mean(axis=1)
    flat = np.all(data == data[:, :1], axis=1)
    # a share up to `unseen` of questions could score anything and still give this sample (the 95% bound
    # on an event never seen in n draws); where every value is equal that is all the sample says
    unseen = _wilson(np.zeros(1), n, Z95)[1][0]
    flat_low, flat_high = mean * (1 - unseen), mean + (1 - mean) * unseen
    if n == 1 or flat.all():
        return flat_low, flat_high
    # with spread, a share 2 / (n + 2) (paired deltas: the same 95% bound)
    share = unseen if paired else 2 / (n + 2)
    edge_low, edge_high = mean * (1 - share), mean + (1 - mean) * share
    # no interval is wider than the widest a value in [0, 1] allows: Bernoulli variance, Wilson on the sum
    worst_low, worst_high = _wilson(data.sum(axis=1), n, Z95)

    # resampled means and second moments as one matrix product with per-resample counts
    idx = rng.integers(0, n, size=(samples, n))
    counts = np.bincount((np.arange(samples)[:, None] * n + idx).ravel(), minlength=samples * n)
    counts = counts.reshape(samples, n).T / n
    dev = data - mean[:, None]
    boot_shift = dev @ counts  # resampled mean minus the sample's, centred to keep rounding small
    boot_mean = mean[:, None] + boot_shift
    boot_var = np.clip((dev * dev) @ counts - boot_shift**2, 0.0, None) * n / (n - 1)
    # a matrix product rounds differently from a sum: equal means differ by ~1e-16, flat resamples get ~1e-17
    tied = np.abs(boot_shift) <= TOLERANCE
    ordered = np.sort(boot_mean, axis=1)

    # expanded BCa
    z0 = norm.ppf(np.clip(((boot_shift < 0) & ~tied).sum(1) / samples + 0.5 * tied.sum(1) / samples,
                          0.5 / samples, 1 - 0.5 / samples))
    ss = (dev**2).sum(axis=1)
    accel = np.where(ss > 0, (dev**3).sum(axis=1) / (6 * np.where(ss > 0, ss, 1.0) ** 1.5), 0.0)
    half_alpha = norm.cdf(-np.sqrt(n / (n - 1)) * t.ppf(1 - alpha / 2, n - 1))

    def bca_level(zq, if_degenerate):
        w = z0 + zq
        den = 1 - accel * w
        return np.where(den > 0, norm.cdf(z0 + w / np.where(den > 0, den, 1.0)), if_degenerate)

    bca_low = _row_quantiles(ordered, bca_level(norm.ppf(half_alpha), 0.0))
    bca_high = _row_quantiles(ordered, bca_level(norm.isf(half_alpha), 1.0))

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
    a, b = _paired_arrays(before, after)
    d = b - a
    if not np.all(np.isfinite(d)):
        raise ValueError("before and after must be finite numbers")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if not np.any(d):
        return 1.0
    n = d.size
    observed = abs(float(d.mean()))
    threshold = observed - _REL_TOL * float(np.abs(d).mean())

    if n <= EXACT_MAX_N:
        patterns = np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n)
        signs = 1.0 - 2.0 * (patterns & 1)
        stats = np.abs(signs @ d) / n
        return float(np.count_nonzero(stats >= threshold)) / (1 << n)

    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_ELEMENTS // n)
    count = 0
    remaining = samples
    while remaining:
        k = min(rows, remaining)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(k, n), dtype=np.int8)
        count += int(np.count_nonzero(np.abs(signs @ d) / n >= threshold))
        remaining -= k
    return (count + 1) / (samples + 1)
