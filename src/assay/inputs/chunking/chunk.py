"""What every chunker builds on: the span and the chunk it makes, trimming, the size and overlap options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


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
