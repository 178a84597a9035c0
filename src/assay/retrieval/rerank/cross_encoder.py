"""Cross-encoder reranking through fastembed's ONNX ``TextCrossEncoder``.

A cross-encoder reads the question and one passage together and returns a
relevance score, higher meaning more relevant; its scale is the model's own
(logits, not probabilities). It is too slow to run over a whole corpus, so it
rescores only the top ``top_n`` candidates of a first-stage ranking.

assay never downloads a model. A named model is loaded from the fastembed
cache (``$FASTEMBED_CACHE_PATH``, else fastembed's default under the system
temp directory) with ``local_files_only``; a model directory given as
``model_path`` is loaded as it is. Anything missing raises ``ModelNotAvailable``
saying where assay looked and how to fill the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Protocol

from assay.core.errors import ConfigError, ModelNotAvailable
from assay.retrieval import Hit, rank_hits

DEFAULT_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"

# Where an exported cross-encoder directory usually keeps its graph, in the order tried.
ONNX_FILES = ("model.onnx", "onnx/model.onnx")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


class Reranker(Protocol):
    def rerank(self, query: str, texts: list[str]) -> list[float]: ...


class CrossEncoderReranker:
    """One loaded cross-encoder; ``identity()`` says exactly which one, for the run record."""

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        model_path: str | Path | None = None,
        batch_size: int = 32,
    ):
        if batch_size < 1:
            raise ConfigError(f"reranker batch size must be at least 1, got {batch_size}")
        from assay.core.extras import require

        require("dense", "the cross-encoder reranker")
        self.model_name = model_name
        self.model_path = Path(model_path) if model_path is not None else None
        self.batch_size = batch_size
        self._onnx_sha256: str | None = None
        if self.model_path is not None:
            self._encoder, self.onnx_path = _load_from_path(model_name, self.model_path)
        else:
            self._encoder, self.onnx_path = _load_from_cache(model_name)

    def identity(self) -> dict:
        """The model's name and the SHA-256 of the ONNX file loaded.

        Only the graph file is hashed: weights a model keeps in external data
        files beside it are not covered.
        """
        if self._onnx_sha256 is None:
            self._onnx_sha256 = _sha256_file(self.onnx_path)
        return {"model": self.model_name, "onnx_sha256": self._onnx_sha256}

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        """One score per text, in the order given."""
        if not texts:
            return []
        scores = [float(s) for s in self._encoder.rerank(query, list(texts), batch_size=self.batch_size)]
        if len(scores) != len(texts):
            raise RuntimeError(f"cross-encoder {self.model_name} returned {len(scores)} scores for {len(texts)} texts")
        return scores


def rerank_hits(
    reranker: Reranker,
    query: str,
    hits: list[Hit],
    texts_by_chunk_id: dict[str, str],
    top_n: int,
) -> list[Hit]:
    """Rescore the best ``top_n`` hits with the cross-encoder and rank them by its score.

    The candidates are first put in the shared order (``rank_hits``: score
    desc, chunk id asc), so which ``top_n`` are kept does not depend on the
    order ``hits`` came in. Candidates beyond ``top_n`` are dropped, not
    appended after the reranked ones: their first-stage scores are on another
    scale and cannot be ranked against cross-encoder scores. Each returned
    hit's score is its cross-encoder score; equal scores fall back to chunk id.
    """
    if top_n < 1:
        raise ConfigError(f"rerank depth (top_n) must be at least 1, got {top_n}")
    candidates = rank_hits(hits)[:top_n]
    if not candidates:
        return []
    missing = [h.chunk_id for h in candidates if h.chunk_id not in texts_by_chunk_id]
    if missing:
        raise ValueError(f"no text for chunk(s) {', '.join(missing)}; the reranker needs every candidate's text")
    scores = reranker.rerank(query, [texts_by_chunk_id[h.chunk_id] for h in candidates])
    return rank_hits([Hit(h.chunk_id, h.doc_id, score) for h, score in zip(candidates, scores)])


def _load_from_path(model_name: str, model_path: Path):
    if not model_path.is_dir():
        raise ModelNotAvailable(f"cross-encoder directory {model_path} does not exist")
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    registered = _registered(model_name)
    tried = ([registered.model_file] if registered is not None else []) + list(ONNX_FILES)
    model_file = next((f for f in tried if (model_path / f).is_file()), None)
    missing = [f for f in TOKENIZER_FILES if not (model_path / f).is_file()]
    if model_file is None:
        missing.insert(0, " or ".join(dict.fromkeys(tried)))
    if missing:
        raise ModelNotAvailable(
            f"cross-encoder directory {model_path} lacks {', '.join(missing)}; "
            "it must hold an ONNX export of the model and its tokenizer files"
        )
    name = _register_local(model_name, model_file)
    try:
        encoder = TextCrossEncoder(name, specific_model_path=str(model_path))
    except Exception as exc:  # onnxruntime's load errors share no base class but Exception
        raise ModelNotAvailable(f"cannot load cross-encoder from {model_path}: {exc}") from exc
    return encoder, model_path / model_file


def _load_from_cache(model_name: str):
    from fastembed.common.utils import define_cache_dir
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    if _registered(model_name) is None:
        known = ", ".join(m["model"] for m in TextCrossEncoder.list_supported_models())
        raise ModelNotAvailable(
            f"cross-encoder {model_name!r} is not one fastembed knows ({known}); "
            "to use another model, pass model_path, a directory holding its model.onnx and tokenizer files"
        )
    cache_dir = define_cache_dir()
    try:
        with _quiet_fastembed():
            encoder = TextCrossEncoder(model_name, cache_dir=str(cache_dir), local_files_only=True)
    except Exception as exc:
        raise ModelNotAvailable(
            f"cross-encoder {model_name!r} is not in the fastembed cache at {cache_dir} "
            f"($FASTEMBED_CACHE_PATH, else fastembed's default; fastembed said: {exc}) and assay never downloads models. "
            "On a machine with internet, fill a cache with: "
            f"FASTEMBED_CACHE_PATH=fastembed_cache python -c 'from fastembed.rerank.cross_encoder import "
            f"TextCrossEncoder; TextCrossEncoder(\"{model_name}\")', "
            "then copy fastembed_cache here and set FASTEMBED_CACHE_PATH to it"
        ) from exc
    # fastembed keeps where it found the model only on the inner model object
    inner = encoder.model
    return encoder, Path(inner._model_dir) / inner.model_description.model_file


def _registered(model_name: str):
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    for description in TextCrossEncoder._list_supported_models():
        if description.model.lower() == model_name.lower():
            return description
    return None


def _register_local(model_name: str, model_file: str) -> str:
    """The name under which fastembed will load ``model_file`` from a local directory.

    fastembed joins the directory with the ``model_file`` registered for the
    name, and refuses to register a name twice (case-insensitively, for the
    life of the process). A name it lacks is registered as it is; a name it
    knows with another file layout is registered under an alias naming the file.
    """
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    registered = _registered(model_name)
    if registered is not None and registered.model_file == model_file:
        return model_name
    name = model_name if registered is None else f"{model_name}@{model_file}"
    if _registered(name) is None:
        # the source is never fetched: specific_model_path makes fastembed skip downloading
        TextCrossEncoder.add_custom_model(name, sources=ModelSource(hf=model_name), model_file=model_file)
    return name


@contextlib.contextmanager
def _quiet_fastembed():
    """Silence fastembed's loguru errors about a cache miss; ModelNotAvailable says it better."""
    from loguru import logger

    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
