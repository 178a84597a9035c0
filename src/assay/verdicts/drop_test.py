"""Whether a drop in a pipeline's history is real: the runs from the drop on against the baseline window before it.

``assay history`` first finds a candidate with the tolerance rule (``assay.verdicts.regression.lasting_drop``: the earliest
run from which no later run came back to within the tolerance of the best before it), then calls it lasting only
when this test says the fall is larger than the noise of the questions:

- **baseline window**: the ``window`` runs just before the candidate (default 3; fewer when fewer exist);
- **drop window**: the candidate and every run after it;
- **paired** when every run of both windows has the same questions (history compares only runs with the same
  judgments and corpus, so the same number of values in the slice means the same questions, in the same order):
  each question's mean over the baseline window against its mean over the drop window, d = drop - baseline, and a
  one-sided sign-flip permutation test of mean(d) < 0 (under no change, each d is as likely negated);
- **unpaired** otherwise: every per-question value of the baseline runs against every one of the drop runs, a
  one-sided permutation test of the difference of means (labels shuffled).

p = (1 + resamples at least as extreme) / (1 + resamples), ``RESAMPLES`` of them, drawn from a generator seeded with
the candidate run's seed: the same history gives the same p. The drop is lasting when p < ``ALPHA``. A change of
exactly zero on every question has p = 1.
"""

from __future__ import annotations

ALPHA = 0.05
# What a run of a pipeline can be besides one of its own runs (assay.verdicts.regression.run_kind); history leaves these out
# unless asked: they try other settings, or re-measure a stored run, and are not the pipeline as it runs
KINDS = ("sweep", "ablation", "rescore", "revalidate")
WINDOW = 3
RESAMPLES = 10_000
_BATCH = 1_000  # resamples drawn at a time: n x 1,000 floats, whatever n is


def drop_test(points: list[dict], values: dict[str, list[float]], start: int, window: int = WINDOW,
              seed: int = 0, alpha: float = ALPHA, resamples: int = RESAMPLES) -> dict:
    """The test of the runs ``points[start:]`` against ``points[start - window:start]``; ``values``: each run's
    per-question values in question order. Returns the windows, their means, the delta (drop minus baseline), the
    test's name, n, p and whether p < alpha."""
    baseline = points[max(0, start - window):start]
    dropped = points[start:]
    base_vals = [values[p["run_id"]] for p in baseline]
    drop_vals = [values[p["run_id"]] for p in dropped]
    sizes = {len(v) for v in base_vals + drop_vals}
    if len(sizes) == 1:
        n = sizes.pop()
        base = [sum(v[q] for v in base_vals) / len(base_vals) for q in range(n)]
        drop = [sum(v[q] for v in drop_vals) / len(drop_vals) for q in range(n)]
        test, p = "paired sign-flip permutation", sign_flip_p([b - a for a, b in zip(base, drop)], seed, resamples)
    else:
        base = [x for v in base_vals for x in v]
        drop = [x for v in drop_vals for x in v]
        n = len(base) + len(drop)
        test, p = "unpaired permutation", permutation_p(base, drop, seed, resamples)
    base_mean, drop_mean = sum(base) / len(base), sum(drop) / len(drop)
    return {"baseline_runs": [p["run_id"] for p in baseline], "drop_runs": [p["run_id"] for p in dropped],
            "baseline_mean": base_mean, "drop_mean": drop_mean, "delta": drop_mean - base_mean, "test": test,
            "n": n, "p_value": p, "alpha": alpha, "resamples": resamples, "seed": seed, "window": window,
            "significant": p < alpha}


def sign_flip_p(diffs: list[float], seed: int, resamples: int = RESAMPLES) -> float:
    """One-sided p of mean(diffs) < 0 under sign flips: the share of resampled means at or below the observed one,
    the observed counted once."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    observed = d.mean()
    if not np.any(d):
        return 1.0
    rng = np.random.default_rng(seed)
    at_or_below = 0
    for start in range(0, resamples, _BATCH):
        k = min(_BATCH, resamples - start)
        signs = rng.integers(0, 2, size=(k, d.size)) * 2 - 1
        # a hair of slack: the same sum in another order must count as "as extreme"
        at_or_below += int(np.count_nonzero((signs @ d) / d.size <= observed + 1e-12))
    return (1 + at_or_below) / (1 + resamples)


def permutation_p(before: list[float], after: list[float], seed: int, resamples: int = RESAMPLES) -> float:
    """One-sided p of mean(after) < mean(before) when the labels are shuffled."""
    import numpy as np

    pooled = np.asarray(list(before) + list(after), dtype=float)
    n_after = len(after)
    observed = pooled[len(before):].mean() - pooled[:len(before)].mean()
    total = pooled.sum()
    rng = np.random.default_rng(seed)
    at_or_below = 0
    for start in range(0, resamples, _BATCH):
        k = min(_BATCH, resamples - start)
        order = rng.permuted(np.tile(np.arange(pooled.size), (k, 1)), axis=1)
        after_sum = pooled[order[:, :n_after]].sum(axis=1)
        stat = after_sum / n_after - (total - after_sum) / (pooled.size - n_after)
        at_or_below += int(np.count_nonzero(stat <= observed + 1e-12))
    return (1 + at_or_below) / (1 + resamples)
