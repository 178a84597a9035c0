"""Calibrated abstention: Platt scaling of each question's top score, and the threshold below which to abstain.

Label 1 is an answerable question, 0 a ``no_answer`` one. A question's score is the final
score of its rank-1 hit; a question with no hits has no score (``None``).

Questions with no hits are left out of the fit and always abstain. Platt scaling models
P(answerable | score); a question without a score says nothing about that curve, and any
stand-in score (say "lowest score minus 1") is in the retriever's units, so it would bend
the fit by an amount that depends on whether scores are BM25 sums or cosines. Such a
question has nothing to return, so it abstains whatever the threshold: its probability is
0, and every threshold is > 0. It still counts in every confusion table and in the choice
of threshold (an answerable one is a false negative, a ``no_answer`` one a true negative),
because a missing answer is not a missing question.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from assay.core.errors import CalibrationError
from assay.core.hashing import canonical_json, sha256_text

CAVEAT = (
    "In-sample figures are optimistic: the curve and threshold were fitted on the same questions "
    "they are scored on. The held-out figures (fit on one half of the questions by position, "
    "scored on the other half) are the honest estimate."
)

# Newton's method as in Lin, Lin & Weng (2007), "A note on Platt's probabilistic outputs".
_MAX_ITER = 100
_MIN_STEP = 1e-10
_SIGMA = 1e-12  # added to the Hessian's diagonal so it stays invertible (Levenberg-style)
_ARMIJO = 1e-4
_GRAD_TOL = 1e-12  # per question, on scores standardised to [-1, 1]


# --- Platt scaling ---------------------------------------------------------------------------


def platt_fit(scores, labels) -> tuple[float, float]:
    """Fit P(y=1 | s) = 1 / (1 + exp(-(a*s + b))) by maximum likelihood; return ``(a, b)``.

    Platt's (1999) smoothed targets replace the 0/1 labels, so the optimum is finite even
    when the scores separate the labels perfectly::

        t_i = (N+ + 1) / (N+ + 2)  if y_i = 1        t_i = 1 / (N- + 2)  if y_i = 0

        F(a, b) = sum_i  log(1 + exp(z_i)) - t_i * z_i,        z_i = a * s_i + b

    F is convex, with gradient sum_i (p_i - t_i) * (s_i, 1) and Hessian
    sum_i p_i (1 - p_i) * (s_i, 1)(s_i, 1)^T. It is minimised by Newton's method with
    sigma = 1e-12 added to the Hessian's diagonal and a halving (Armijo) line search, from
    a = 0, b = log((N+ + 1) / (N- + 1)), as in Lin, Lin & Weng (2007). Scores are first
    mapped affinely onto [-1, 1], which leaves the optimum unchanged but makes the stopping
    rule independent of the score's units. Each term is evaluated as
    max(z, 0) - t*z + log1p(exp(-|z|)), which cannot overflow. Deterministic.

    ``scores`` must all be finite: leave questions with no hits out (see the module docstring).
    Raises CalibrationError unless there is at least one example of each label.
    """
    s = np.asarray(scores, dtype=float)
    y = _labels(labels, s.size)
    if s.ndim != 1 or not np.all(np.isfinite(s)):
        raise CalibrationError("platt_fit needs a flat list of finite scores; leave questions with no hits out")
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise CalibrationError(
            f"Platt scaling needs at least one answerable and one no_answer question with a score; "
            f"got {n_pos} answerable and {n_neg} no_answer. Add questions of the missing kind to the judgments."
        )
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    centre = float(s.mean())
    scale = float(np.max(np.abs(s - centre))) or 1.0
    a, b = _newton((s - centre) / scale, t, b=math.log((n_pos + 1) / (n_neg + 1)))
    # z = a * (s - centre) / scale + b, written in the caller's units
    return a / scale, b - a * centre / scale


def platt_predict(a: float, b: float, scores) -> np.ndarray:
    """P(answerable) = 1 / (1 + exp(-(a*s + b))) for each score; 0.0 where the score is None (no hits).

    A question with no hits gets 0 whatever the sign of ``a``: substituting s = -inf would
    give it probability 1 under a fit with a < 0.
    """
    return _predict(a, b, _scores(scores))


def _predict(a: float, b: float, s: np.ndarray) -> np.ndarray:
    probs = np.zeros(s.size)
    has = ~np.isnan(s)
    probs[has] = _sigmoid(a * s[has] + b)
    return probs


@np.errstate(under="ignore")  # products of tiny weights may underflow to 0, which is their exact limit
def _newton(x: np.ndarray, t: np.ndarray, b: float) -> tuple[float, float]:
    a = 0.0
    f = _nll(x, t, a, b)
    for _ in range(_MAX_ITER):
        z = a * x + b
        p, q = _sigmoid(z), _sigmoid(-z)
        d1 = p - t
        g1, g2 = float(x @ d1), float(d1.sum())
        if max(abs(g1), abs(g2)) <= _GRAD_TOL * x.size:
            break
        w = p * q
        h11, h22, h21 = float((x * x) @ w) + _SIGMA, float(w.sum()) + _SIGMA, float(x @ w)
        det = h11 * h22 - h21 * h21
        da = -(h22 * g1 - h21 * g2) / det
        db = -(h11 * g2 - h21 * g1) / det
        slope = g1 * da + g2 * db
        step = 1.0
        while step >= _MIN_STEP:
            new_a, new_b = a + step * da, b + step * db
            new_f = _nll(x, t, new_a, new_b)
            # <= rather than <: next to the optimum F stops changing in floating point (below
            # ~1e-8 in the parameters), and the Newton step is then the one to take
            if new_f <= f + _ARMIJO * step * slope:
                a, b, f = new_a, new_b, new_f
                break
            step /= 2
        else:
            break  # no step decreases F: the optimum is reached to float precision
    return a, b


def _nll(x: np.ndarray, t: np.ndarray, a: float, b: float) -> float:
    z = a * x + b
    with np.errstate(under="ignore"):
        return float(np.sum(np.maximum(z, 0.0) - t * z + np.log1p(np.exp(-np.abs(z)))))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # exp(-|z|) never overflows; its underflow to 0 for large |z| is the exact limit, hence silenced.
    with np.errstate(under="ignore"):
        e = np.exp(-np.abs(z))
        return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


# --- Threshold and confusion -----------------------------------------------------------------


def best_threshold(probs, labels) -> tuple[float, float]:
    """The threshold t maximising balanced accuracy when a question is kept iff p >= t.

    balanced accuracy = (TPR + TNR) / 2, TPR = kept answerable / answerable,
    TNR = abstained no_answer / no_answer.

    Candidates are the distinct probabilities above 0 (0 marks a question with no hits,
    which is never kept) and +inf, meaning "abstain on everything"; every other threshold
    splits the questions as one of these does. Ties go to the lowest threshold reaching the
    maximum, i.e. the fewest abstentions. Returns ``(threshold, balanced_accuracy)``.
    Raises CalibrationError unless both labels occur.
    """
    p = _probs(probs)
    y = _labels(labels, p.size)
    pos, neg = np.sort(p[y == 1]), np.sort(p[y == 0])
    if pos.size == 0 or neg.size == 0:
        raise CalibrationError(
            f"balanced accuracy needs both answerable and no_answer questions; "
            f"got {pos.size} answerable and {neg.size} no_answer"
        )
    candidates = np.append(np.unique(p[p > 0]), math.inf)
    tp = pos.size - np.searchsorted(pos, candidates, side="left")  # answerable with p >= t
    tn = np.searchsorted(neg, candidates, side="left")  # no_answer with p < t
    # 2 * N+ * N- * balanced accuracy, in integers so that equal accuracies tie exactly
    scaled = tp * neg.size + tn * pos.size
    best = int(np.argmax(scaled))  # the first maximum is the lowest threshold
    return float(candidates[best]), _balanced(int(tp[best]), pos.size, int(tn[best]), neg.size)


def confusion(probs, labels, threshold: float) -> dict:
    """Counts and rates when a question is kept iff p >= threshold (threshold > 0).

    tp: answerable kept, fn: answerable abstained on, tn: no_answer abstained on, fp: no_answer
    kept. tpr = tp / (tp + fn), tnr = tn / (tn + fp), balanced_accuracy = (tpr + tnr) / 2.
    A rate over an empty class is None, and so is balanced_accuracy then; never 0.
    """
    if not threshold > 0:
        raise CalibrationError(
            f"threshold must be above 0 (or +inf to abstain on everything); got {threshold}. "
            "Probability 0 marks a question with no hits, which is never kept."
        )
    p = _probs(probs)
    y = _labels(labels, p.size)
    keep = p >= threshold
    tp = int(np.sum(keep & (y == 1)))
    fn = int(np.sum(~keep & (y == 1)))
    tn = int(np.sum(~keep & (y == 0)))
    fp = int(np.sum(keep & (y == 0)))
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    balanced = (tpr + tnr) / 2 if tpr is not None and tnr is not None else None
    return {"tp": tp, "fn": fn, "tn": tn, "fp": fp, "tpr": tpr, "tnr": tnr, "balanced_accuracy": balanced}


def _balanced(tp: int, n_pos: int, tn: int, n_neg: int) -> float:
    return (tp / n_pos + tn / n_neg) / 2


# --- The whole calibration -------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationResult:
    """A fitted curve and threshold, with in-sample and held-out confusion tables.

    ``threshold`` may be ``math.inf`` ("abstain on everything"). ``held_out`` holds two dicts,
    fit on odd then on even positions: {"fit", "test", "a", "b", "threshold", "confusion",
    "error"}; ``error`` is None, or says why that split could not be fitted and the figures
    are None. Counts include questions with no hits; ``n_no_hits`` says how many there were.
    """

    a: float
    b: float
    threshold: float
    in_sample: dict
    held_out: tuple[dict, ...]
    n: int
    n_answerable: int
    n_no_answer: int
    n_no_hits: int
    fit_set_hash: str
    caveat: str = CAVEAT

    def to_dict(self) -> dict:
        """Strict JSON (no NaN or Infinity): a +inf threshold is written "inf", which float() reads back."""
        return {
            "a": self.a,
            "b": self.b,
            "threshold": _json_threshold(self.threshold),
            "in_sample": dict(self.in_sample),
            "held_out": [{**split, "threshold": _json_threshold(split["threshold"])} for split in self.held_out],
            "n": self.n,
            "n_answerable": self.n_answerable,
            "n_no_answer": self.n_no_answer,
            "n_no_hits": self.n_no_hits,
            "fit_set_hash": self.fit_set_hash,
            "caveat": self.caveat,
        }


def calibrate(question_ids, scores, labels) -> CalibrationResult:
    """Fit on every question (in-sample figures) and on each half by position (held-out figures).

    ``scores[i]`` is question i's top score, or None if it had no hits; ``labels[i]`` is 1 for
    answerable, 0 for no_answer. The halves go by position in the order given (callers pass
    questions sorted by query_id): "odd" is the 1st, 3rd, 5th ... question, "even" the 2nd,
    4th, 6th .... Each split fits a, b and the threshold on one half and reports the
    confusion on the other. ``fit_set_hash`` is the SHA-256 of the canonical JSON of the
    [question_id, score, label] triples sorted by question_id, so it ignores input order.
    Raises CalibrationError if the whole set cannot be fitted; a half that cannot be fitted
    is reported with an ``error`` instead.
    """
    ids = list(question_ids)
    s = _scores(scores, ids)
    y = _labels(labels, s.size)
    if len(ids) != s.size:
        raise CalibrationError(f"{len(ids)} question ids but {s.size} scores")
    if len(set(ids)) != len(ids):
        dupes = sorted(q for q, count in Counter(ids).items() if count > 1)
        raise CalibrationError(f"question ids repeat: {', '.join(map(str, dupes))}")

    a, b, threshold = _fit(s, y)
    in_sample = confusion(_predict(a, b, s), y, threshold)

    positions = np.arange(s.size)
    odd, even = positions[0::2], positions[1::2]  # 1-based positions 1, 3, 5 ... and 2, 4, 6 ...
    held_out = (
        _held_out("odd", "even", s, y, odd, even),
        _held_out("even", "odd", s, y, even, odd),
    )
    triples = sorted(
        ([q, None if math.isnan(v) else float(v), int(label)] for q, v, label in zip(ids, s, y)),
        key=lambda triple: triple[0],
    )
    return CalibrationResult(
        a=a,
        b=b,
        threshold=threshold,
        in_sample=in_sample,
        held_out=held_out,
        n=int(s.size),
        n_answerable=int(y.sum()),
        n_no_answer=int(s.size - y.sum()),
        n_no_hits=int(np.isnan(s).sum()),
        fit_set_hash=sha256_text(canonical_json(triples)),
    )


def _fit(s: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Curve from the questions with hits; threshold chosen over all questions."""
    has = ~np.isnan(s)
    n_pos, n_neg = int(np.sum(y[has] == 1)), int(np.sum(y[has] == 0))
    if n_pos == 0 or n_neg == 0:
        no_hits = int(np.sum(~has))
        raise CalibrationError(
            f"calibration needs at least one answerable and one no_answer question with hits; "
            f"got {n_pos} answerable and {n_neg} no_answer"
            + (f" ({no_hits} question(s) with no hits are left out of the fit)" if no_hits else "")
            + ". Add questions of the missing kind to the judgments."
        )
    a, b = platt_fit(s[has], y[has])
    threshold, _ = best_threshold(_predict(a, b, s), y)
    return a, b, threshold


def _held_out(fit: str, test: str, s: np.ndarray, y: np.ndarray, fit_idx: np.ndarray, test_idx: np.ndarray) -> dict:
    split = {"fit": fit, "test": test, "a": None, "b": None, "threshold": None, "confusion": None, "error": None}
    try:
        a, b, threshold = _fit(s[fit_idx], y[fit_idx])
    except CalibrationError as exc:
        split["error"] = f"cannot fit on the {fit} positions: {exc}"
        return split
    tested = confusion(_predict(a, b, s[test_idx]), y[test_idx], threshold)
    split.update(a=a, b=b, threshold=threshold, confusion=tested)
    return split


def _json_threshold(threshold: float | None):
    return "inf" if threshold == math.inf else threshold


# --- Input checking ----------------------------------------------------------------------------


def _scores(scores, ids: list | None = None) -> np.ndarray:
    """Floats, with NaN standing for None (no hits). A non-finite score is refused: it is not 'no hits'."""
    values = []
    for i, v in enumerate(scores):
        if v is None:
            values.append(math.nan)
            continue
        v = float(v)
        if not math.isfinite(v):
            where = f"question {ids[i]!r}" if ids is not None and i < len(ids) else f"position {i}"
            raise CalibrationError(f"{where} has score {v}; a score must be finite, or None for no hits")
        values.append(v)
    return np.asarray(values, dtype=float)


def _labels(labels, n: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,):
        raise CalibrationError(f"expected {n} labels, got shape {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise CalibrationError("labels must be 1 (answerable) or 0 (no_answer)")
    return y.astype(np.int64)


def _probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or not np.all((p >= 0) & (p <= 1)):
        raise CalibrationError("probabilities must be a flat list of numbers in [0, 1]")
    return p
