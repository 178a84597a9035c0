import numpy as np
import pytest

from assay.inputs.chunking import Chunk
from assay.retrieval import dense as dense_module
from assay.retrieval.dense import DenseIndex


class FixedEmbedder:
    """Returns given query vectors; the chunk vectors are passed to the index directly."""

    def __init__(self, vectors):
        self.vectors = vectors

    def embed_queries(self, texts):
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


def chunks(n):
    return [Chunk(f"d{i % 7}.md", i, i * 10, i * 10 + 5, "x") for i in range(n)]


@pytest.mark.parametrize("block", [3, 1000])
def test_exact_top_n_matches_brute_force(monkeypatch, block):
    monkeypatch.setattr(dense_module, "BLOCK_ROWS", block)
    rng = np.random.default_rng(0)
    cs = chunks(50)
    vecs = rng.normal(size=(50, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    q = rng.normal(size=8).astype(np.float32)
    index = DenseIndex(cs, vecs, FixedEmbedder({"q": q}))
    got = index.search("q", 10)
    scores = vecs @ q
    expected = sorted(range(50), key=lambda i: (-scores[i], cs[i].chunk_id))[:10]
    assert [h.chunk_id for h in got] == [cs[i].chunk_id for i in expected]
    assert [h.score for h in got] == pytest.approx([float(scores[i]) for i in expected])


def test_ties_at_the_cut_are_ordered_by_chunk_id(monkeypatch):
    monkeypatch.setattr(dense_module, "BLOCK_ROWS", 2)
    cs = chunks(6)
    vecs = np.array([[1, 0]] * 6, dtype=np.float32)  # every chunk scores the same
    index = DenseIndex(cs, vecs, FixedEmbedder({"q": np.array([1, 0], dtype=np.float32)}))
    got = index.search("q", 3)
    assert [h.chunk_id for h in got] == sorted(c.chunk_id for c in cs)[:3]


def test_empty_index_and_zero_limit():
    index = DenseIndex([], np.zeros((0, 2), dtype=np.float32), FixedEmbedder({"q": np.ones(2, dtype=np.float32)}))
    assert index.search("q", 5) == []
    index = DenseIndex(chunks(2), np.ones((2, 2), dtype=np.float32), FixedEmbedder({"q": np.ones(2)}))
    assert index.search("q", 0) == []
