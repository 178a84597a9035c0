"""The budget of a PDF being read (``assay.inputs.corpus.budget``), spent inside pdfminer.

pdfminer has no hooks for what a file unpacks or how long it takes, so ``guard`` wraps, once, the places it
decodes streams (each filter that can expand its input: Flate and LZW a piece at a time, RunLength from its run
lengths before it decodes, ASCII85, ASCIIHex and CCITT once decoded), reads a file or a content stream (every
4 KB buffer: the clock), and lays a page out (each glyph, path, image and figure; every pair of text boxes
before it orders them). Each wrapper does nothing when no budget is active, so pdfminer used elsewhere in the
process behaves as it always did; a zlib stream decodes to the same bytes and fails with the same error.
"""

from __future__ import annotations

import io
import threading

from assay.inputs.corpus.budget import LAYOUT_OBJECT_BYTES, PAIR_BYTES, active


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


def guard() -> None:
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
