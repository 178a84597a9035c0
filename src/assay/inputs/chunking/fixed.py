"""Fixed-size character windows with overlap.

Windows of ``size`` characters start every ``size - overlap`` characters; the
last window ends at the end of the text. Each window is trimmed of surrounding
whitespace (offsets follow), and windows that hold only whitespace are dropped.
"""

from __future__ import annotations

from assay.inputs.chunking.chunk import Chunk, SizedChunker, chunk_document, trim


class FixedChunker(SizedChunker):
    name = "fixed"
    default_overlap = 100

    @classmethod
    def default_overlap_for(cls, size: int) -> int:
        """100 characters, or a quarter of the chunk size when that is smaller."""
        return min(cls.default_overlap, size // 4)

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
