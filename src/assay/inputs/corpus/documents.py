"""A document as read (its text, size, hash, pages, format and encoding) and a corpus of them: what every reader
makes and everything downstream reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.inputs.corpus.files import Skipped


@dataclass(frozen=True)
class Document:
    doc_id: str  # corpus-relative path, forward slashes
    text: str
    byte_size: int
    sha256: str
    pages: tuple[tuple[int, int], ...] = ()  # paged formats (PDF): page i+1 is text[start:end]; the pages tile it
    format: str | None = None  # markdown, text, rst, html, pdf, docx; None: imported or stored before formats
    encoding: str | None = None  # the codec a text format was decoded with
    encoding_source: str | None = None  # default (UTF-8), bom, given (--encoding), detected
    unmapped: int = 0  # PDF glyphs without a text mapping, read as (cid:N)

    @property
    def empty(self) -> bool:
        return not self.text.strip()

    def pages_of(self, start: int, end: int) -> list[int]:
        """The page numbers ``[start, end)`` lies on ([] when the document has no pages); an empty span
        lies on the page holding its offset."""
        end = max(end, start + 1)
        return [i for i, (s, e) in enumerate(self.pages, 1) if s < end and e > start]


@dataclass(frozen=True)
class Corpus:
    root: Path
    corpus_hash: str
    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...] | None = None  # files under the root not read, with the reason; None: not
                                                # read from a directory (stored, imported, made in code)
    readers: dict = field(default_factory=dict)  # what made text beyond decoding UTF-8: libraries, encodings

    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}
