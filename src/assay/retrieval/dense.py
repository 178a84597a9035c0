"""Exact cosine top-N over normalized chunk vectors (no approximate index).

Scores are computed block by block over the chunk matrix, so the working memory
per query is bounded by the block size, not the corpus size. Every chunk with a
score at least the N-th best is kept before the cut, so equal scores at the
cut-off are ordered by chunk id like every other ranking.
"""

from __future__ import annotations

import numpy as np

from assay.retrieval import Hit, rank_hits

BLOCK_ROWS = 65_536


class DenseIndex:
    def __init__(self, chunks, vectors: np.ndarray, embedder):
        self._chunks = list(chunks)
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.embedder = embedder
        self._prepared: dict[str, np.ndarray] = {}

    def prepare(self, texts: list[str]) -> None:
        """Embed the questions of a run in one batch (one question at a time costs ~6x more)."""
        from assay.core import progress

        unique = list(dict.fromkeys(texts))
        with progress.task("embedding questions", total=len(unique), unit="questions") as shown:
            self._prepared.update(zip(unique, self.embedder.embed_queries(unique, advance=shown.advance)))

    def config(self) -> dict:
        return {"name": "dense", "search": "exact cosine", "embedding": self.embedder.identity.as_dict()}

    def _top(self, query_vector: np.ndarray, limit: int) -> list[Hit]:
        n = len(self._chunks)
        if n == 0 or limit <= 0:
            return []
        best_idx = np.empty(0, dtype=np.int64)
        best_scores = np.empty(0, dtype=np.float32)
        for start in range(0, n, BLOCK_ROWS):
            scores = self._vectors[start:start + BLOCK_ROWS] @ query_vector
            idx = np.arange(start, start + len(scores))
            best_idx = np.concatenate([best_idx, idx])
            best_scores = np.concatenate([best_scores, scores])
            if len(best_scores) > limit:
                cut = np.partition(best_scores, len(best_scores) - limit)[len(best_scores) - limit]
                keep = best_scores >= cut  # ties at the cut stay, so the final order can break them
                best_idx, best_scores = best_idx[keep], best_scores[keep]
        hits = [Hit(self._chunks[i].chunk_id, self._chunks[i].doc_id, float(s)) for i, s in zip(best_idx, best_scores)]
        return rank_hits(hits)[:limit]

    def search(self, text: str, limit: int) -> list[Hit]:
        vector = self._prepared.get(text)
        if vector is None:
            vector = self.embedder.embed_queries([text])[0]
        return self._top(vector, limit)
