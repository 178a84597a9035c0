"""The real offline ONNX model (installed by `make install`) and the warehouse vector cache."""

import numpy as np
import pytest

from assay.inputs.chunking import Chunk
from assay.store.vectors import cached_vectors, embed_chunks
from assay.retrieval.embedding.embedder import Embedder, resolve_model
from assay.core.errors import ModelNotAvailable
from assay.retrieval.models import OFFLINE_FILES, OFFLINE_MODEL, check_offline_model


@pytest.fixture(scope="module")
def embedder():
    assert check_offline_model() == [], "run `make install` to install the offline model"
    return Embedder("offline")


def test_offline_model_identity(embedder):
    ident = embedder.identity
    assert ident.model == OFFLINE_MODEL
    assert ident.onnx_sha256 == OFFLINE_FILES["model.onnx"][2]
    assert ident.dim == 384 and ident.normalized and ident.query_prefix == ""
    assert len(ident.hash) == 64


def test_vectors_are_normalized_and_meaningful(embedder):
    q = embedder.embed_queries(["how do readers and writers share the log"])[0]
    p = embedder.embed_passages(["WAL mode allows concurrent readers while one writer appends",
                                 "Tulips are planted in autumn"])
    assert np.linalg.norm(p, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert p[0] @ q > p[1] @ q


def test_batch_order_does_not_change_vectors(embedder):
    texts = ["short", "a much longer text about checkpoints and compaction " * 5, "medium length text here"]
    together = embedder.embed_passages(texts)
    alone = np.vstack([embedder.embed_passages([t]) for t in texts])
    assert together == pytest.approx(alone, abs=1e-5)


def test_cache_reuses_and_never_mixes_identities(warehouse, embedder):
    cs = [Chunk("a.md", i, 0, 1, t) for i, t in enumerate(["alpha text", "beta text", "alpha text"])]
    first, computed, reused = embed_chunks(warehouse, embedder, cs)
    assert (computed, reused) == (2, 0)  # the repeated text is embedded once
    second, computed, reused = embed_chunks(warehouse, embedder, cs)
    assert (computed, reused) == (0, 2)
    assert np.array_equal(first, second)
    more = cs + [Chunk("b.md", 0, 0, 1, "gamma text")]
    _, computed, reused = embed_chunks(warehouse, embedder, more)
    assert (computed, reused) == (1, 2)

    class Other:
        identity = type(embedder.identity)(**{**embedder.identity.as_dict(), "query_prefix": "query: "})

    from assay.core.hashing import sha256_text
    assert cached_vectors(warehouse, Other.identity, [sha256_text("alpha text")]) == {}


def test_unknown_model_names_the_way_to_get_it():
    with pytest.raises(ModelNotAvailable, match="not in the fastembed cache"):
        resolve_model("BAAI/bge-base-en-v1.5")


def test_missing_offline_model_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("ASSAY_MODELS", str(tmp_path))
    with pytest.raises(ModelNotAvailable, match="assay models install"):
        resolve_model("offline")
