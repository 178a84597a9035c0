"""A normalised view of a text whose every character maps back to a range of the original.

A view is the original text rewritten in layers; each layer is a sorted list of edits
``(start, end, replacement)`` over the previous layer's text, and keeps what it needs to map any
range of its result back to a range of its source. The layers, in order:

1. **characters** (every view): typographic variants folded to ASCII (curly single and double
   quotes, primes, the acute accent and modifier apostrophe to ``'`` and ``"``; hyphen, non-breaking
   hyphen, figure dash, en dash, em dash, horizontal bar and minus sign to ``-``); soft hyphens,
   zero-width spaces and joiners, word joiners and byte-order marks removed (a soft hyphen at a line
   end is left to layer 2); NFKC where it only changes presentation (decompositions tagged
   ``<compat>``, ``<font>``, ``<wide>``, ``<narrow>``, ``<small>``, ``<noBreak>`` and the Arabic
   positional forms: ligatures ``ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ``, full-width letters, ``…``), never where it
   changes meaning (superscripts, subscripts, fractions, circled and squared forms stay); a base
   letter with combining marks composed (NFC). One original character may become several (``ﬃ`` is
   ``ffi``): each maps back to that one character.
2. **structure** (the "rendered" view only): a hyphen at a line end between two letters, followed
   by a lower-case letter, is PDF hyphenation: ``exam-\\nple`` reads ``example`` (whether the
   hyphen belonged to the word, as in ``well-\\nknown``, only the quote can say:
   :func:`assay.inputs.judgments.resolve.find_quote` tries it both ways); before a capital the hyphen
   stays and the line break goes (``Hewlett-Packard``); a soft hyphen at a line end is removed with
   the line break; and for Markdown and reStructuredText documents the markup a reader does not see
   (:mod:`assay.inputs.judgments.markup`).
3. **whitespace**: every run of whitespace is one space.

The "plain" view (layers 1 and 3) matches everything the old whitespace-tolerant exact matching
matched, with the same spans; the rendered view adds what a copy from a rendered page or a PDF
reader gives. :func:`assay.inputs.judgments.resolve.find_quote` searches a quote, normalised the same
way, in every view of its document.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from assay.inputs.judgments.markup import markup_edits, markup_syntax

__all__ = ["Rewrite", "View", "fold_char", "markup_syntax", "normalize", "views"]

_FOLDED = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u00b4\u02bc\uff07", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\uff02", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    # invisible: soft hyphen, zero-width space, non-joiner, joiner, word joiner, byte-order mark
    **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", ""),
}
_PRESENTATION_TAGS = {"<compat>", "<font>", "<wide>", "<narrow>", "<small>", "<noBreak>",
                      "<initial>", "<medial>", "<final>", "<isolated>"}
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_SOFT_HYPHEN_AT_LINE_END = re.compile(r"[^\S\n]*\n")
# the hyphen first, so the scan skips to hyphens; then the letter before it
_LINE_END_HYPHEN = re.compile(r"([-\u00ad])(?<=[^\W\d_][-\u00ad])[^\S\n]*\n[^\S\n]*(?=([^\W\d_]))")
_WHITESPACE = re.compile(r"\s{2,}|[^\S ]")


@lru_cache(maxsize=4096)
def fold_char(ch: str) -> str | None:
    """What one character becomes in layer 1, or None when it stays as it is."""
    if ch in _FOLDED:
        return _FOLDED[ch]
    if ch.isspace() or unicodedata.combining(ch):
        return None
    decomposition = unicodedata.decomposition(ch)
    if not decomposition:
        return None
    tag = decomposition.split()[0]
    if tag.startswith("<"):
        if tag not in _PRESENTATION_TAGS:
            return None
        folded = unicodedata.normalize("NFKC", ch)
    else:
        folded = unicodedata.normalize("NFC", ch)  # canonical singletons: the ohm sign is omega
    folded = "".join(_FOLDED.get(c, c) for c in folded)
    # NFKC gives a spacing accent as a space and a combining mark: not a presentation variant
    if folded == ch or any(c.isspace() or unicodedata.combining(c) for c in folded):
        return None
    return folded


def _fold_string(text: str) -> str:
    return "".join(c if fold_char(c) is None else fold_char(c) for c in text)


def _character_edits(text: str) -> list[tuple[int, int, str]]:
    edits: list[tuple[int, int, str]] = []
    for run in _NON_ASCII.finditer(text):
        i, end = run.start(), run.end()
        while i < end:
            ch = text[i]
            j = i + 1
            if unicodedata.combining(ch):
                while j < end and unicodedata.combining(text[j]):
                    j += 1
                if i == run.start() and i > 0 and not text[i - 1].isspace():
                    _compose(text, i - 1, j, edits)  # the marks' base is the ASCII letter before the run
                i = j
                continue
            while j < end and unicodedata.combining(text[j]):
                j += 1
            if j > i + 1:
                _compose(text, i, j, edits)
            elif ch == "\u00ad" and _SOFT_HYPHEN_AT_LINE_END.match(text, j):
                pass  # a word broken at a line end: layer 2 joins it
            else:
                folded = fold_char(ch)
                if folded is not None:
                    edits.append((i, j, folded))
            i = j
    return edits


def _compose(text: str, start: int, end: int, edits: list) -> None:
    cluster = text[start:end]
    base = fold_char(cluster[0])
    composed = unicodedata.normalize("NFC", (cluster[0] if base is None else base) + cluster[1:])
    if composed != cluster:
        edits.append((start, end, composed))


def _hyphenation_edits(text: str) -> list[tuple[int, int, str]]:
    edits = []
    for m in _LINE_END_HYPHEN.finditer(text):
        if m.group(1) == "\u00ad" or m.group(2).islower():
            edits.append((m.start(), m.end(), ""))
        else:
            edits.append((m.start() + 1, m.end(), ""))
    return edits


class Rewrite:
    """``source`` rewritten by sorted, non-overlapping ``edits`` of (start, end, replacement).

    ``text`` is the result; :meth:`span` maps a range of it back to ``source``. A character of a
    replacement maps to the whole range it replaced; a removed range maps to nothing.
    """

    __slots__ = ("source", "text", "_at", "_start", "_end", "_width")

    def __init__(self, source: str, edits: list[tuple[int, int, str]]):
        self.source = source
        self._at: list[int] = []  # where each edit's replacement begins in ``text``
        self._start: list[int] = []
        self._end: list[int] = []
        self._width: list[int] = []
        parts: list[str] = []
        pos = out = 0
        for a, b, replacement in edits:
            parts.append(source[pos:a])
            out += a - pos
            self._at.append(out)
            self._start.append(a)
            self._end.append(b)
            self._width.append(len(replacement))
            parts.append(replacement)
            out += len(replacement)
            pos = b
        parts.append(source[pos:])
        self.text = "".join(parts)

    def _source_range(self, i: int) -> tuple[int, int]:
        k = bisect_right(self._at, i) - 1
        if k < 0:
            return i, i + 1
        inside = i - self._at[k]
        if inside < self._width[k]:
            return self._start[k], self._end[k]
        at = self._end[k] + inside - self._width[k]
        return at, at + 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The [start, end) range of ``source`` that ``text[start:end]`` (not empty) came from."""
        return self._source_range(start)[0], self._source_range(end - 1)[1]


@dataclass(frozen=True)
class View:
    """One normalised view of ``original``: ``text``, and ``span`` back to the original."""

    original: str
    layers: tuple[Rewrite, ...]
    syntax: str | None = None
    rendered: bool = False
    breaks: bool = False  # rendered, and line-end hyphens were joined

    @property
    def text(self) -> str:
        return self.layers[-1].text if self.layers else self.original

    def span(self, start: int, end: int) -> tuple[int, int]:
        for layer in reversed(self.layers):
            start, end = layer.span(start, end)
        return start, end


def _folded(text: str) -> Rewrite | None:
    edits = _character_edits(text)
    return Rewrite(text, edits) if edits else None


def normalize(text: str, syntax: str | None = None, rendered: bool = False,
              _folded_layer: Rewrite | None | bool = False) -> View:
    """The view of ``text``: plain (characters folded, whitespace collapsed), or ``rendered``.

    ``syntax``: ``"markdown"``, ``"rst"`` or None; markup is removed only in a rendered view.
    """
    folded = _folded(text) if _folded_layer is False else _folded_layer
    layers = [folded] if folded is not None else []
    current = folded.text if folded is not None else text
    breaks = False
    if rendered:
        structure = _hyphenation_edits(current)
        breaks = bool(structure)
        if syntax:
            structure = _merge(structure, markup_edits(current, syntax))
            # an entity (&rsquo;) is replaced by its character, which is folded as any other
            structure = [(a, b, _fold_string(r) if r else r) for a, b, r in structure]
        if structure:
            layers.append(Rewrite(current, structure))
            current = layers[-1].text
    spaces = [(m.start(), m.end(), " ") for m in _WHITESPACE.finditer(current)]
    if spaces:
        layers.append(Rewrite(current, spaces))
    return View(text, tuple(layers), syntax, rendered, rendered and breaks)


def _merge(first: list, second: list) -> list:
    """Both lists of edits, sorted; an edit that overlaps one already taken is dropped."""
    merged, end = [], -1
    for edit in sorted(first + second, key=lambda e: (e[0], e[1])):
        if edit[0] >= end:
            merged.append(edit)
            end = max(end, edit[1])
    return merged


@lru_cache(maxsize=32)  # a view of a 1 MB document holds about 10 MB
def views(text: str, syntax: str | None = None) -> tuple[View, ...]:
    """The views of a document: plain; and rendered, when it has markup syntax or line-end hyphens.

    Cached by text (a str caches its hash): resolving many quotes in one document normalises it once.
    """
    folded = _folded(text)
    breaks = _LINE_END_HYPHEN.search(folded.text if folded is not None else text) is not None
    found = [normalize(text, syntax, _folded_layer=folded)]
    if syntax or breaks:
        found.append(normalize(text, syntax, rendered=True, _folded_layer=folded))
    return tuple(found)
