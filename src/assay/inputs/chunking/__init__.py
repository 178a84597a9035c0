"""Chunkers turn a document's text into [start, end) spans. The chunker is a measured variable.

Each chunker lives in its own module and registers under its name; the run
configuration names the chunker and its parameters, and so does every run's hash.
"""

from __future__ import annotations

from assay.core.errors import ConfigError
# what every chunker builds on, in a module of its own so the chunkers need not import this registry
from assay.inputs.chunking.chunk import Chunk, SizedChunker, Span, chunk_document, trim  # noqa: F401


def chunker_label(chunker: dict) -> str:
    order = ["size", "overlap"]
    keys = sorted((k for k in chunker if k != "name"), key=lambda k: (order.index(k) if k in order else 9, k))
    params = ", ".join(f"{k}={chunker[k]}" for k in keys)
    return f"{chunker['name']}({params})" if params else chunker["name"]


def _registry():
    from assay.inputs.chunking.document import DocumentChunker
    from assay.inputs.chunking.fixed import FixedChunker
    from assay.inputs.chunking.recursive import RecursiveChunker

    return {c.name: c for c in (FixedChunker, RecursiveChunker, DocumentChunker)}


def chunker_names() -> list[str]:
    return sorted(_registry())


def make_chunker(name: str, size: int | None = None, overlap: int | None = None):
    registry = _registry()
    if name not in registry:
        raise ConfigError(f"unknown chunker {name!r}; choose one of: {', '.join(sorted(registry))}")
    return registry[name].from_options(size=size, overlap=overlap)
