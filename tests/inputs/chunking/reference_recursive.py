"""Recursive, separator-aware chunking: paragraphs, then lines, then sentences, then words.

A span longer than ``size`` is split at the coarsest separator that occurs in it,
and each part that is still too long is split at the next finer one; a single
word longer than ``size`` is cut at ``size`` characters. The resulting pieces are
packed greedily, in order, into chunks of at most ``size`` characters. A chunk
starts with up to ``overlap`` characters of whole pieces from the end of the
previous chunk.

A heading (a Markdown ``#`` line, an reStructuredText title with its adornment,
or a lone short line without closing punctuation) is glued to the text that
follows it, so no chunk is a bare heading; that piece may exceed ``size`` by the
heading's length. A document no longer than ``size`` stays one chunk.
"""

from __future__ import annotations

import re

from assay.inputs.chunking import Chunk, SizedChunker, chunk_document, trim

_SEPARATORS = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraphs
    # lines; never between a title and the rST/setext underline that makes it a heading
    # (a ``` line is far more often a Markdown code fence than an underline)
    re.compile(r"\n(?![ \t]*([=\-~^\"'#*+<>:_.])\1{2,}[ \t]*$)", re.M),
    re.compile(r"(?<=[.!?])\s+"),  # sentences
    re.compile(r"\s+"),  # words
)
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>:_.])\1{2,}$")
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_CLOSING = tuple(".!?:;,)|]}>`")
_NOT_HEADING_START = ("-", "*", "+", "|", "`", ">", "<")


def is_heading(text: str) -> bool:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return False
    if all(_MD_HEADING.match(line) for line in lines):
        return True
    if len(lines) in (2, 3) and _RST_ADORNMENT.match(lines[-1]) and (
        len(lines) == 2 or _RST_ADORNMENT.match(lines[0])
    ):
        return True
    if len(lines) == 1:
        line = lines[0]
        return (
            len(line) <= 80
            and not line.endswith(_CLOSING)
            and not line.startswith(_NOT_HEADING_START)
            and not re.match(r"^\d+[.)]\s", line)
        )
    return False


def _is_heading_piece(text: str, start: int, end: int) -> bool:
    """Whether a piece, in its place in the text, is a heading.

    is_heading judges text alone; a piece must also be whole lines (a sentence or
    word cut from a line is body text), and a short line counts only standing alone
    as its paragraph, not as one line of a wrapped paragraph.
    """
    s, e = trim(text, start, end)
    if e <= s:
        return False
    before, after = s, e
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    while after < len(text) and text[after] in " \t":
        after += 1
    if (before > 0 and text[before - 1] != "\n") or (after < len(text) and text[after] != "\n"):
        return False
    piece = text[s:e]
    if _RST_ADORNMENT.match(piece):
        # An rST overline: the title and underline follow on the next lines. A rule with a
        # blank line after it is left where it is.
        nxt = after + 1
        while nxt < len(text) and text[nxt] in " \t":
            nxt += 1
        return nxt < len(text) and text[nxt] != "\n"
    if not is_heading(piece):
        return False
    if "\n" in piece or _MD_HEADING.match(piece):
        return True
    while before > 0 and text[before - 1].isspace():
        before -= 1
    while after < len(text) and text[after].isspace():
        after += 1
    return (before == 0 or text.count("\n", before, s) >= 2) and (
        after == len(text) or text.count("\n", e, after) >= 2
    )


class RecursiveChunker(SizedChunker):
    name = "recursive"

    # -- splitting -------------------------------------------------------------------------
    def _length(self, text: str, start: int, end: int) -> int:
        s, e = trim(text, start, end)
        return e - s

    def _pieces(self, text: str, start: int, end: int, level: int) -> list[tuple[int, int]]:
        if self._length(text, start, end) <= self.size:
            return [(start, end)]
        if level == len(_SEPARATORS):
            s, e = trim(text, start, end)
            return [(i, min(i + self.size, e)) for i in range(s, e, self.size)]
        cuts = [m.end() for m in _SEPARATORS[level].finditer(text, start, end) if start < m.end() < end]
        bounds = [start, *cuts, end]
        parts = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
        if len(parts) == 1:
            return self._pieces(text, start, end, level + 1)
        out: list[tuple[int, int]] = []
        for a, b in parts:
            out.extend(self._pieces(text, a, b, level + 1))
        return out

    @staticmethod
    def _glue_headings(text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
        glued: list[tuple[int, int]] = []
        pending: int | None = None  # start of heading(s) waiting for their body
        for start, end in pieces:
            if not text[start:end].strip():
                # whitespace is no body: it waits with a heading, or goes with the piece before,
                # so neither a heading nor a trailing heading is left glued to nothing but blanks
                if pending is None and glued:
                    glued[-1] = (glued[-1][0], end)
                elif pending is None:
                    pending = start
                continue
            if _is_heading_piece(text, start, end):
                pending = start if pending is None else pending
                continue
            glued.append((pending if pending is not None else start, end))
            pending = None
        if pending is not None:  # a trailing heading joins what came before it
            if glued:
                glued[-1] = (glued[-1][0], pieces[-1][1])
            else:
                glued.append((pending, pieces[-1][1]))
        return glued

    # -- packing ---------------------------------------------------------------------------
    def chunk(self, doc_id: str, text: str) -> list[Chunk]:
        whole = trim(text, 0, len(text))
        if whole[1] <= whole[0]:
            return []
        if whole[1] - whole[0] <= self.size:
            return chunk_document(doc_id, text, [whole])
        pieces = self._glue_headings(text, self._pieces(text, 0, len(text), 0))
        spans: list[tuple[int, int]] = []
        current: list[tuple[int, int]] = []
        for piece in pieces:
            if current and self._length(text, current[0][0], piece[1]) > self.size:
                spans.append(trim(text, current[0][0], current[-1][1]))
                carried: list[tuple[int, int]] = []
                for prev in reversed(current):
                    if (
                        self._length(text, prev[0], current[-1][1]) > self.overlap
                        or self._length(text, prev[0], piece[1]) > self.size
                    ):
                        break
                    carried.insert(0, prev)
                current = carried
            current.append(piece)
        if current:
            spans.append(trim(text, current[0][0], current[-1][1]))
        return chunk_document(doc_id, text, [s for s in spans if s[1] > s[0]])
