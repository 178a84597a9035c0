"""Fixed-size character windows with overlap.

Windows of ``size`` characters start every ``size - overlap`` characters; the
last window ends at the end of the text. Each window is trimmed of surrounding
whitespace (offsets follow), and windows that hold only whitespace are dropped.
"""

from __future__ import annotations

from assay.chunking import Chunk, chunk_document, trim
from assay.errors import ConfigError


class FixedChunker:
    name = "fixed"
    default_size = 800
    default_overlap = 100

    def __init__(self, size: int, overlap: int):
        if size < 1:
            raise ConfigError(f"chunk size must be at least 1, got {size}")
        if not 0 <= overlap < size:
            raise ConfigError(f"overlap must be at least 0 and below the chunk size {size}, got {overlap}")
        self.size, self.overlap = size, overlap

    @classmethod
    def from_options(cls, size=None, overlap=None):
        size = size if size is not None else cls.default_size
        # default overlap: 100 characters, or a quarter of the chunk size when that is smaller
        return cls(size, overlap if overlap is not None else min(cls.default_overlap, size // 4))

    def config(self) -> dict:
        return {"name": self.name, "size": self.size, "overlap": self.overlap}

    def chunk(self, doc_id: str, text: str) -> list[Chunk]:
        spans, step, n = [], self.size - self.overlap, len(text)
        start = 0
        while True:
            end = min(start + self.size, n)
            s, e = trim(text, start, end)
            if e > s and (not spans or (s, e) != spans[-1]):
                spans.append((s, e))
            if end >= n:
                break
            start += step
        return chunk_document(doc_id, text, spans)
