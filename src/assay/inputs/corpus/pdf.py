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

A ``ReadBudget`` (``assay.inputs.corpus.budget``) bounds what a file may unpack and how long it may take.
pdfminer has no hooks for either, so ``_guard`` wraps, once, the places it decodes streams (each filter that can
expand its input: Flate, LZW, RunLength, ASCII85, ASCIIHex, CCITT), reads a file or content stream (every 4 KB
buffer), and lays a page out (each glyph, path and image; the pairs of text boxes it orders); each wrapper does
nothing when no budget is active, so pdfminer used elsewhere in the process is unchanged.
"""

from __future__ import annotations

import io
import logging
import re
import threading
from dataclasses import dataclass
from importlib import metadata

from assay.inputs.corpus.budget import LAYOUT_OBJECT_BYTES, PAIR_BYTES, OverBudget, ReadBudget, active, spending

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

    _guard()
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


# --- the budget inside pdfminer ----------------------------------------------------------------------------------

_GUARDED = threading.Lock()
_CHUNK = 1 << 16  # bytes a Flate stream inflates by between looks at the budget


class _BoundedInflate:
    """``zlib.decompressobj()`` whose output is spent from the active budget as it comes."""

    def __init__(self, zlib, *args):
        self._d = zlib.decompressobj(*args)

    def decompress(self, data, max_length=0):
        budget = active()
        if budget is None or max_length:
            out = self._d.decompress(data, max_length)
        else:
            parts, out = [], self._d.decompress(data, _CHUNK)
            while True:
                budget.spend(len(out))
                parts.append(out)
                if self._d.eof or (not self._d.unconsumed_tail and len(out) < _CHUNK):
                    break
                out = self._d.decompress(self._d.unconsumed_tail, _CHUNK)
            return b"".join(parts)
        if budget is not None:
            budget.spend(len(out))
        return out

    def __getattr__(self, name):
        return getattr(self._d, name)


class _BoundedZlib:
    """What pdfminer.pdftypes calls ``zlib``: ``decompress`` inflates a chunk at a time, spending the budget, and
    fails as zlib.decompress fails on a stream that does not end; everything else is zlib's."""

    def __init__(self, zlib):
        self._zlib = zlib

    def decompress(self, data, *args, **kwargs):
        if active() is None or args or kwargs:
            return self._zlib.decompress(data, *args, **kwargs)
        d = _BoundedInflate(self._zlib)
        out = d.decompress(data)
        if not d.eof:
            raise self._zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
        return out

    def decompressobj(self, *args):
        return _BoundedInflate(self._zlib, *args)

    def __getattr__(self, name):
        return getattr(self._zlib, name)


def _lzw(original):
    def lzwdecode(data: bytes) -> bytes:
        budget = active()
        if budget is None:
            return original(data)
        from pdfminer.lzw import LZWDecoder

        parts = []
        for piece in LZWDecoder(io.BytesIO(data)).run():
            budget.spend(len(piece))
            parts.append(piece)
        return b"".join(parts)
    return lzwdecode


def _run_length(original):
    def rldecode(data: bytes) -> bytes:
        budget = active()
        if budget is not None:  # the length it decodes to, from the run lengths alone, before any of it is made
            size, at = 0, 0
            while at < len(data) and data[at] != 128:
                length = data[at]
                size, at = (size + length + 1, at + length + 2) if length < 128 else (size + 257 - length, at + 2)
            budget.spend(size)
        return original(data)
    return rldecode


def _spent_after(original):
    """A filter whose output is at most a few times its input (ASCII85, ASCIIHex) or an image's bits (CCITT):
    spent once made."""
    def decode(data, *args):
        out = original(data, *args)
        budget = active()
        if budget is not None:
            budget.spend(len(out))
        return out
    return decode


def _timed(fillbuf):
    def timed(self):
        budget = active()
        if budget is not None:
            budget.check_time()
        return fillbuf(self)
    return timed


def _held(method):
    def holding(self, *args, **kwargs):
        budget = active()
        if budget is not None:
            budget.hold(LAYOUT_OBJECT_BYTES)
        return method(self, *args, **kwargs)
    return holding


def _paged(begin_page):
    def begin(self, *args, **kwargs):
        budget = active()
        if budget is not None:
            budget.new_page()
        return begin_page(self, *args, **kwargs)
    return begin


def _paired(group_textboxes):
    def grouping(self, laparams, boxes, *args, **kwargs):
        budget = active()
        if budget is not None:  # every pair of boxes is a tuple in one list before the first is merged
            budget.hold(PAIR_BYTES * (len(boxes) * (len(boxes) - 1) // 2))
        return group_textboxes(self, laparams, boxes, *args, **kwargs)
    return grouping


def _guard() -> None:
    """Wrap pdfminer's decoders, parsers and layout once (see the module docstring)."""
    from pdfminer import converter, layout, pdfinterp, pdftypes, psparser

    with _GUARDED:
        if getattr(pdftypes, "_assay_guarded", False):
            return
        pdftypes.zlib = _BoundedZlib(pdftypes.zlib)
        pdftypes.lzwdecode = _lzw(pdftypes.lzwdecode)
        pdftypes.rldecode = _run_length(pdftypes.rldecode)
        for name in ("ascii85decode", "asciihexdecode", "ccittfaxdecode"):
            setattr(pdftypes, name, _spent_after(getattr(pdftypes, name)))
        psparser.PSBaseParser.fillbuf = _timed(psparser.PSBaseParser.fillbuf)
        pdfinterp.PDFContentParser.fillbuf = _timed(pdfinterp.PDFContentParser.fillbuf)
        analyzer = converter.PDFLayoutAnalyzer
        for name in ("render_char", "paint_path", "render_image", "begin_figure"):
            setattr(analyzer, name, _held(getattr(analyzer, name)))
        analyzer.begin_page = _paged(analyzer.begin_page)
        layout.LTLayoutContainer.group_textboxes = _paired(layout.LTLayoutContainer.group_textboxes)
        pdftypes._assay_guarded = True
