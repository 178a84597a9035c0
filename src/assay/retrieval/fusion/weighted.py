"""Normalized weighted-sum fusion.

Each list's scores are min-max normalized to [0, 1] (a list whose scores are all
equal normalizes to 1), then

    score(d) = sum over lists L of w_L * norm_L(d),   norm_L(d) = 0 when d is not in L.

Weights default to equal shares; equal fused scores are ordered by chunk id.
"""

from __future__ import annotations

from assay.retrieval import Hit, rank_hits


def _normalize(hits: list[Hit]) -> dict[str, float]:
    if not hits:
        return {}
    lo, hi = min(h.score for h in hits), max(h.score for h in hits)
    if hi == lo:
        return {h.chunk_id: 1.0 for h in hits}
    return {h.chunk_id: (h.score - lo) / (hi - lo) for h in hits}


def weighted_sum(lists: dict[str, list[Hit]], weights: dict[str, float]) -> list[Hit]:
    names = sorted(lists)
    w = {n: float(weights.get(n, 1.0 / len(names))) for n in names}
    scores: dict[str, float] = {}
    docs: dict[str, str] = {}
    for name in names:
        for chunk_id, value in _normalize(lists[name]).items():
            scores[chunk_id] = scores.get(chunk_id, 0.0) + w[name] * value
        for hit in lists[name]:
            docs[hit.chunk_id] = hit.doc_id
    return rank_hits([Hit(c, docs[c], s) for c, s in scores.items()])
