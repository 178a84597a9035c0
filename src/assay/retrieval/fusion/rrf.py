"""Reciprocal rank fusion (Cormack, Clarke & Buettcher 2009).

    score(d) = sum over lists L containing d of 1 / (k + rank_L(d)),   ranks 1-based, k = 60 by default.

A chunk missing from a list contributes nothing for it. Equal fused scores are
ordered by chunk id.
"""

from __future__ import annotations

from assay.retrieval import Hit, rank_hits


def rrf(lists: dict[str, list[Hit]], k: int = 60) -> list[Hit]:
    scores: dict[str, float] = {}
    docs: dict[str, str] = {}
    for name in sorted(lists):  # a fixed order of summation: identical floats on every run
        for rank, hit in enumerate(lists[name], 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            docs[hit.chunk_id] = hit.doc_id
    return rank_hits([Hit(c, docs[c], s) for c, s in scores.items()])
