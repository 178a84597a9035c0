"""fastembed text embedders, loaded offline: the installed offline model or the user's fastembed cache.

Texts are embedded in batches ordered by length, so a batch pads to similar
lengths; that bounds memory on corpora with a few very long texts (padding one
long text with hundreds of short ones is what exhausts memory). Prefixes are
applied here, explicitly, and recorded in the identity; every vector is
L2-normalized so a dot product is the cosine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from assay.retrieval.embedding.identity import EmbeddingIdentity
from assay.core.errors import ConfigError, ModelNotAvailable
from assay.retrieval.models import (
    BGE_QUERY_PREFIX, BGE_SMALL, OFFLINE_MODEL, cached_model_dir, check_offline_model, file_sha256, how_to_get,
    offline_model_dir,
)

PREFIXES = {BGE_SMALL: (BGE_QUERY_PREFIX, "")}
# Each model's documented input length, its default max_length. all-MiniLM-L6-v2 is used with 256 word
# pieces (its sentence-transformers max_seq_length, the setting its published scores use); its tokenizer
# files say 512, which also costs twice the time and memory (on SciFact: 1.9 GB instead of 0.9 GB).
# max_length may raise it up to the model's limit (model_limit).
MAX_TOKENS = {OFFLINE_MODEL: 256, BGE_SMALL: 512}
DEFAULT_BATCH = 16


def resolve_model(name: str | None) -> tuple[str, Path]:
    """(model name, directory) for a configured name; 'auto' or None picks bge-small, else the offline model."""
    if name in (None, "", "auto"):
        cached = cached_model_dir(BGE_SMALL)
        if cached is not None:
            return BGE_SMALL, cached
        if not check_offline_model():
            return OFFLINE_MODEL, offline_model_dir()
        raise ModelNotAvailable(
            f"no embedding model available: {BGE_SMALL} is not in the fastembed cache and the offline model is "
            f"not installed at {offline_model_dir()}; run `assay models install` (or `make install`)"
        )
    if name in (OFFLINE_MODEL, "offline", "all-MiniLM-L6-v2"):
        problems = check_offline_model()
        if problems:
            raise ModelNotAvailable(
                f"the offline model {OFFLINE_MODEL} is not installed ({problems[0]}); run `assay models install`"
            )
        return OFFLINE_MODEL, offline_model_dir()
    cached = cached_model_dir(name)
    if cached is None:
        raise ModelNotAvailable(f"embedding model {name!r} is not in the fastembed cache; {how_to_get(name)}")
    return name, cached


def model_limit(model_dir: Path) -> int | None:
    """The most word pieces the model takes (special tokens included), as its files state it: the position
    embeddings of config.json and the tokenizer's model_max_length, the smaller; None when neither says."""
    import json

    limits = []
    for name, key in (("config.json", "max_position_embeddings"), ("tokenizer_config.json", "model_max_length")):
        path = model_dir / name
        if path.is_file():
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
            if isinstance(value, int) and 0 < value < 1_000_000:  # transformers writes 1e30 for "no limit"
                limits.append(value)
    return min(limits) if limits else None


class Embedder:
    def __init__(self, model: str | None = None, batch_size: int = DEFAULT_BATCH, threads: int | None = None,
                 max_length: int | None = None):
        """``max_length``: word pieces embedded per text, special tokens included (None: the model's default,
        ``MAX_TOKENS``); refused above the model's limit, before the model is loaded."""
        from assay.core.extras import require

        require("dense", "dense retrieval (an embedding model)")
        from fastembed import TextEmbedding

        self.model_name, self.model_dir = resolve_model(model)
        onnx = next(iter(sorted(self.model_dir.glob("*.onnx"))), None)
        if onnx is None:
            raise ModelNotAvailable(f"no .onnx file in {self.model_dir}")
        default = MAX_TOKENS.get(self.model_name, 512)
        self.model_limit = model_limit(self.model_dir) or default  # files that state no limit: the default's
        max_tokens = _checked_length(self.model_name, max_length, min(default, self.model_limit), self.model_limit)
        self.batch_size = batch_size
        self._model = TextEmbedding(self.model_name, specific_model_path=str(self.model_dir), threads=threads,
                                    local_files_only=True)
        query_prefix, passage_prefix = PREFIXES.get(self.model_name, ("", ""))
        self._model.model.tokenizer.enable_truncation(max_length=max_tokens)
        dim = len(next(iter(self._model.embed(["dimension probe"]))))
        self.identity = EmbeddingIdentity(self.model_name, file_sha256(onnx), dim, True, query_prefix, passage_prefix,
                                          max_tokens)

    def truncation(self, texts: list[str], query: bool = False):
        """How many of ``texts`` (passages, or questions) this embedder cuts, and how much of them it never
        embeds (assay.retrieval.embedding.truncation), counted with the model's own tokenizer."""
        from assay.retrieval.embedding.truncation import count

        prefix = self.identity.query_prefix if query else self.identity.passage_prefix
        return count(self._model.model.tokenizer, texts, self.identity.max_tokens, prefix)

    def _embed(self, texts: list[str], advance=None) -> np.ndarray:
        out = np.zeros((len(texts), self.identity.dim), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            vectors = np.asarray(list(self._model.embed([texts[i] for i in idx], batch_size=self.batch_size)),
                                 dtype=np.float32)
            out[idx] = vectors
            if advance is not None:
                advance(len(idx))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed_passages(self, texts: list[str], advance=None) -> np.ndarray:
        """Vectors in order; ``advance(n)`` is called as each batch of n texts is done (progress)."""
        return self._embed([self.identity.passage_prefix + t for t in texts], advance)

    def embed_queries(self, texts: list[str], advance=None) -> np.ndarray:
        return self._embed([self.identity.query_prefix + t for t in texts], advance)


def _checked_length(model: str, given: int | None, default: int, limit: int) -> int:
    if given is None:
        return default
    if isinstance(given, bool) or not isinstance(given, int) or given < 3:
        raise ConfigError(f"max_length must be an integer of at least 3 word pieces (two are the model's special "
                          f"tokens), got {given!r}")
    if given > limit:
        raise ConfigError(f"max_length {given} is more than {model} takes: its limit is {limit} word pieces "
                          f"(special tokens included); set max_length to at most {limit}, or use smaller chunks")
    return given
