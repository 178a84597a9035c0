"""Vectors cached in the warehouse, keyed by embedding identity and chunk-text SHA-256.

The cache is content-addressed: a vector depends only on the identity and the
text, never on a run. It is written in its own transaction as soon as the
vectors exist, so a run that fails afterwards does not lose them; no report or
metric reads this table.
"""

from __future__ import annotations

import numpy as np

from assay.hashing import sha256_text


def cached_vectors(warehouse, identity, text_hashes: list[str]) -> dict[str, np.ndarray]:
    import pyarrow as pa

    if not text_hashes:
        return {}
    wanted = pa.table({"text_sha256": sorted(set(text_hashes))})
    warehouse.con.register("_assay_wanted", wanted)
    try:
        rows = warehouse.con.execute(
            "SELECT e.text_sha256, e.vector FROM embeddings e JOIN _assay_wanted w USING (text_sha256) "
            "WHERE e.identity_hash = ?", [identity.hash]).fetchall()
    finally:
        warehouse.con.unregister("_assay_wanted")
    return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}


def store_vectors(warehouse, identity, vectors: dict[str, np.ndarray]) -> None:
    with warehouse.transaction():
        exists = warehouse.con.execute(
            "SELECT COUNT(*) FROM embedding_identities WHERE identity_hash = ?", [identity.hash]).fetchall()[0][0]
        if not exists:
            d = identity.as_dict()
            warehouse.con.execute(
                "INSERT INTO embedding_identities (identity_hash, model, onnx_sha256, dim, normalized, query_prefix, "
                "passage_prefix, created_at, max_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, now(), ?)",
                [identity.hash, d["model"], d["onnx_sha256"], d["dim"], d["normalized"], d["query_prefix"],
                 d["passage_prefix"], d["max_tokens"]])
        warehouse._insert("embeddings", ["identity_hash", "text_sha256", "vector"],
                          [(identity.hash, h, v.astype(np.float32).tobytes()) for h, v in vectors.items()])


def embed_chunks(warehouse, embedder, chunks, progress=None) -> tuple[np.ndarray, int, int]:
    """Vectors for every chunk, in order, reusing cached ones. Returns (matrix, computed, reused)."""
    hashes = [sha256_text(c.text) for c in chunks]
    have = cached_vectors(warehouse, embedder.identity, hashes) if warehouse is not None else {}
    missing: dict[str, str] = {}
    for h, c in zip(hashes, chunks):
        if h not in have and h not in missing:
            missing[h] = c.text
    if missing:
        if progress:
            progress(f"embedding {len(missing)} chunk texts with {embedder.model_name} "
                     f"({len(set(hashes)) - len(missing)} cached)")
        keys = list(missing)
        matrix = embedder.embed_passages([missing[k] for k in keys])
        new = dict(zip(keys, matrix))
        if warehouse is not None:
            store_vectors(warehouse, embedder.identity, new)
        have.update(new)
    out = np.zeros((len(chunks), embedder.identity.dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = have[h]
    reused = len(set(hashes)) - len(missing)
    return out, len(missing), reused
