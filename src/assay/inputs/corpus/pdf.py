"""PDF to text, page by page, with pdfminer.six.

pdfminer.six analyses each page's layout (LAParams defaults, text inside figures included), so a
two-column page reads column by column even when the file draws it line by line across both columns;
pypdf and pypdfium2 follow the drawing order there. Within a page the text boxes are joined by a blank
line; pages are joined by a blank line too, and each page's span ``[start, end)`` of the document text
is kept: the pages tile the text (the blank line after a page belongs to it), so every offset names its
page. Pages are numbered from 1 in file order (not by the labels a viewer may print on them).

What the PDF's fonts say is kept, with three repairs: ligature glyphs (U+FB00-FB06, as in "ﬁ") are
spelled as their letters, so "ﬁnancial" is found by "financial" in every retriever; control characters
(a glyph without a text mapping can come out as NUL) are dropped; line-end spaces are trimmed.
Hyphenation at a line end is kept as printed ("retrie-\\nval"): only the reader knows whether the hyphen
belongs to the word; quote matching tolerates it. Glyphs whose font gives no text come out as
``(cid:N)`` and are counted.

A ``ReadBudget`` (``assay.inputs.corpus.budget``) bounds what a file may unpack and how long it may take,
spent inside pdfminer by ``assay.inputs.corpus.pdf_guard``.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from importlib import metadata

from assay.inputs.corpus.budget import OverBudget, ReadBudget, spending

LIBRARY = "pdfminer.six"
READER_VERSION = 1  # bump when this module makes other text from the same library's output
PAGE_GAP = "\n\n"
LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st"}
_CONTROL = {c: None for c in range(32) if c not in (9, 10)} | {0x7F: None}
_CID = re.compile(r"\(cid:\d+\)")


class PdfUnreadable(Exception):
    """The file cannot be read as a PDF; the message says why."""


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: tuple[tuple[int, int], ...]  # page i+1 is text[start:end]
    unmapped: int  # glyphs without a text mapping, read as (cid:N)


def identity() -> dict:
    """What made the text, recorded with the corpus (corpora.readers; the hash covers the text itself)."""
    return {"library": f"{LIBRARY} {metadata.version(LIBRARY)}", "reader": READER_VERSION}


def _boxes(item, out: list[str]) -> None:
    from pdfminer.layout import LTContainer, LTTextBox

    if isinstance(item, LTTextBox):
        out.append(item.get_text())
    elif isinstance(item, LTContainer):
        for child in item:
            _boxes(child, out)


def _clean(text: str) -> str:
    text = text.translate(LIGATURES).translate(_CONTROL)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def extract(data: bytes, budget: ReadBudget | None = None) -> PdfText:
    """The text of a PDF's bytes; past ``budget`` (bytes unpacked, seconds) a PdfUnreadable saying which."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    from assay.inputs.corpus.pdf_guard import guard

    guard()
    quiet = logging.getLogger("pdfminer")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "CropBox missing" and the like are not the user's business
    try:
        texts = []
        with spending(budget):
            for layout in extract_pages(io.BytesIO(data), laparams=LAParams(all_texts=True)):
                boxes: list[str] = []
                _boxes(layout, boxes)
                texts.append("\n\n".join(b for b in (_clean(box) for box in boxes) if b.strip()))
    except OverBudget as exc:
        raise PdfUnreadable(str(exc)) from None
    except PDFPasswordIncorrect:
        raise PdfUnreadable("is encrypted with a password; decrypt it (e.g. qpdf --decrypt) or remove it") from None
    except Exception as exc:  # pdfminer raises many kinds on a damaged file: none should stop the others' report
        detail = str(exc).strip() or type(exc).__name__
        raise PdfUnreadable(f"cannot be read as a PDF ({LIBRARY}: {detail[:200]}); re-save it or remove it") from None
    finally:
        quiet.setLevel(level)
    parts, pages, at = [], [], 0
    for i, page in enumerate(texts):
        piece = page + (PAGE_GAP if i < len(texts) - 1 else "\n" if page else "")
        parts.append(piece)
        pages.append((at, at + len(piece)))
        at += len(piece)
    text = "".join(parts)
    if not text.strip():  # no text layer: an empty document, its pages all empty
        return PdfText("", tuple((0, 0) for _ in pages), 0)
    return PdfText(text, tuple(pages), len(_CID.findall(text)))

