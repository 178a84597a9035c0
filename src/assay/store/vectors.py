"""Vectors cached in the warehouse, keyed by embedding identity and chunk-text SHA-256.

The cache is content-addressed: a vector depends only on the identity and the
text, never on a run. Texts are embedded in batches of ``BATCH``, each batch
stored in its own short transaction as soon as it exists, so a run that fails
or is interrupted afterwards keeps every batch it finished and the next run
resumes there; no report or metric reads this table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from assay.core.hashing import sha256_text

BATCH = 256  # texts embedded, then stored, at a time: what an interrupt can lose at most


def cached_vectors(warehouse, identity, text_hashes: list[str]) -> dict[str, np.ndarray]:
    from assay.store.rows import registered

    if not text_hashes:
        return {}
    with warehouse.reading() as wh, registered(wh.con, "_assay_wanted", {"text_sha256": sorted(set(text_hashes))}):
        rows = wh.con.execute(
            "SELECT e.text_sha256, e.vector FROM embeddings e JOIN _assay_wanted w USING (text_sha256) "
            "WHERE e.identity_hash = ?", [identity.hash]).fetchall()
    return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}


def store_vectors(warehouse, identity, vectors: dict[str, np.ndarray]) -> None:
    """Store vectors the warehouse lacks (another process may have stored some of them meanwhile)."""
    from assay.store.warehouse import JOURNAL

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
        stored = {h for h, in warehouse.con.execute(
            "SELECT text_sha256 FROM embeddings WHERE identity_hash = ? AND text_sha256 IN (SELECT UNNEST(?))",
            [identity.hash, list(vectors)]).fetchall()}
        warehouse._insert("embeddings", ["identity_hash", "text_sha256", "vector"],
                          [(identity.hash, h, v.astype(np.float32).tobytes()) for h, v in vectors.items()
                           if h not in stored])
    if Path(warehouse.path).is_file():  # a lake run's in-memory warehouse keeps nothing for the next run
        JOURNAL.vectors += len(vectors)


def embed_chunks(warehouse, embedder, chunks, progress=None) -> tuple[np.ndarray, int, int]:
    """Vectors for every chunk, in order, reusing cached ones. Returns (matrix, computed, reused)."""
    hashes = [sha256_text(c.text) for c in chunks]
    have = cached_vectors(warehouse, embedder.identity, hashes) if warehouse is not None else {}
    missing: dict[str, str] = {}
    for h, c in zip(hashes, chunks):
        if h not in have and h not in missing:
            missing[h] = c.text
    if missing:
        from assay.core import progress as shown

        if progress:
            progress(f"embedding {len(missing)} chunk texts with {embedder.model_name} "
                     f"({len(set(hashes)) - len(missing)} cached)")
        keys = list(missing)
        with shown.task("embedding chunks", total=len(keys), unit="chunks") as task:
            for start in range(0, len(keys), BATCH):
                batch = keys[start:start + BATCH]
                new = dict(zip(batch, embedder.embed_passages([missing[k] for k in batch], advance=task.advance)))
                if warehouse is not None:
                    store_vectors(warehouse, embedder.identity, new)
                    if progress and len(keys) > BATCH and not shown.drawing():  # the bar says it when drawn
                        progress(f"stored {start + len(batch)} of {len(keys)} vectors")
                have.update(new)
    out = np.zeros((len(chunks), embedder.identity.dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = have[h]
    reused = len(set(hashes)) - len(missing)
    return out, len(missing), reused
