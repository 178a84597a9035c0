"""Chunkers turn a document's text into [start, end) spans. The chunker is a measured variable.

Each chunker lives in its own module and registers under its name; the run
configuration names the chunker and its parameters, and so does every run's hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from assay.core.errors import ConfigError


@dataclass(frozen=True)
class Span:
    start: int
    end: int


class Chunk(NamedTuple):
    """A NamedTuple (immutable, compared and hashed by value) rather than a frozen dataclass: made in C,
    at a quarter of the cost, which matters at a million chunks."""

    doc_id: str
    ordinal: int
    start: int
    end: int
    text: str

    @property
    def chunk_id(self) -> str:
        """Stable across chunkers and runs: the document and the character span."""
        return f"{self.doc_id}#{self.start}-{self.end}"


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) so it neither begins nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


class SizedChunker:
    """What chunkers with a size and an overlap share: validation, defaults, configuration."""

    name = ""
    default_size = 800
    default_overlap = 0

    def __init__(self, size: int, overlap: int):
        from assay.core.errors import ConfigError

        if size < 1:
            raise ConfigError(f"chunk size must be at least 1, got {size}")
        if not 0 <= overlap < size:
            raise ConfigError(f"overlap must be at least 0 and below the chunk size {size}, got {overlap}")
        self.size, self.overlap = size, overlap

    @classmethod
    def default_overlap_for(cls, size: int) -> int:
        return cls.default_overlap

    @classmethod
    def from_options(cls, size=None, overlap=None):
        size = size if size is not None else cls.default_size
        return cls(size, overlap if overlap is not None else cls.default_overlap_for(size))

    def config(self) -> dict:
        return {"name": self.name, "size": self.size, "overlap": self.overlap}


def chunk_document(doc_id: str, text: str, spans: list[tuple[int, int]]) -> list[Chunk]:
    new = tuple.__new__  # Chunk's own __new__ is Python: this is the C call it makes
    return [new(Chunk, (doc_id, i, s, e, text[s:e])) for i, (s, e) in enumerate(spans)]


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
