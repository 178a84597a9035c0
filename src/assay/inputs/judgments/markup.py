"""The Markdown and reStructuredText markup a reader of the rendered page does not see.

:func:`markup_edits` returns edits ``(start, end, replacement)`` over a text: mostly removals of
markup characters, and entities replaced by their character. The visible text stays where it is,
so a rendered view maps back to exact source offsets. It is a reader's approximation of the
renderers, not a parser; what it removes:

- Markdown: ``**strong**``, ``*em*``, ``__strong__``, ``_em_``, ``~~struck~~`` (CommonMark's
  flanking rules, so ``snake_case`` and ``2 * 3`` keep their characters), code spans of any number of
  backticks (their content is literal), ``[text](url)``, ``[text][ref]`` and ``![alt](url)`` (the
  text stays), ``<https://autolinks>`` (the address stays), inline HTML tags and comments,
  backslash escapes, entities; at a line start, heading ``#``, block quote ``>``, list bullets and
  numbers, task boxes, table pipes; whole lines of fences, rules, setext underlines, table
  separators and link reference definitions.
- reStructuredText: ````literal```` (content literal), ``*em*`` and ``**strong**`` (never inside
  a word), ```text <url>`_`` and ``:role:`text <target>``` (the text stays), ``name_`` and
  ``[1]_`` references, escapes; at a line start, bullets, numbers and directive names
  (``.. note::``); whole lines of section adornments and hyperlink targets; a paragraph's
  closing ``::`` reads as ``:``.

Emphasis never crosses a blank line. A delimiter without a partner stays a character.
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import PurePosixPath

_REMOVED, _LITERAL, _REPLACED = 1, 2, 3

_SYNTAX = {".md": "markdown", ".markdown": "markdown", ".rst": "rst"}


def markup_syntax(doc_id: str | None) -> str | None:
    """``"markdown"`` or ``"rst"`` by a document id's extension (any case); None for other documents."""
    if not doc_id:
        return None
    return _SYNTAX.get(PurePosixPath(doc_id).suffix.lower())


class _Marks:
    """What each character of a text is: kept, removed, literal (in code), or replaced."""

    def __init__(self, text: str):
        self.text = text
        self.state = bytearray(len(text))
        self.replaced: list[tuple[int, int, str]] = []

    def clear(self, start: int, end: int) -> bool:
        """Nothing in [start, end) is marked yet."""
        return not any(self.state[start:end])

    def mark(self, start: int, end: int, what: int = _REMOVED) -> None:
        if end > start:
            self.state[start:end] = bytes([what]) * (end - start)

    def replace(self, start: int, end: int, replacement: str) -> None:
        self.mark(start, end, _REPLACED)
        self.replaced.append((start, end, replacement))

    def edits(self) -> list[tuple[int, int, str]]:
        removed = [(m.start(), m.end(), "") for m in re.finditer(rb"\x01+", self.state)]
        return sorted(removed + self.replaced)


def markup_edits(text: str, syntax: str) -> list[tuple[int, int, str]]:
    """Sorted, non-overlapping edits that turn ``text`` into what a reader sees."""
    marks = _Marks(text)
    if syntax == "markdown":
        _markdown(marks)
    elif syntax == "rst":
        _rst(marks)
    else:
        raise ValueError(f"unknown markup syntax {syntax!r}")
    return marks.edits()


# -- shared pieces ----------------------------------------------------------------------------

_LINE = re.compile(r"[^\n]*\n?")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _lines(text: str):
    """(start, end) of every line, its newline excluded."""
    for m in _LINE.finditer(text):
        if m.end() == m.start():
            break
        end = m.end() - 1 if m.group().endswith("\n") else m.end()
        yield m.start(), end


def _escapes(marks: _Marks) -> None:
    for m in _ESCAPE.finditer(marks.text):
        if marks.clear(m.start(), m.end()):
            marks.mark(m.start(), m.start() + 1)
            marks.mark(m.start() + 1, m.end(), _LITERAL)


def _entities(marks: _Marks) -> None:
    for m in _ENTITY.finditer(marks.text):
        value = html.unescape(m.group())
        if value != m.group() and marks.clear(m.start(), m.end()):
            marks.replace(m.start(), m.end(), value)


def _is_space(c: str) -> bool:
    return c == "" or c.isspace()


def _is_punct(c: str) -> bool:
    return c != "" and unicodedata.category(c)[0] in "PS"


_DELIMITERS = re.compile(r"\*+|_+|~+")


def _emphasis(marks: _Marks, chars: str, intraword_star: bool) -> None:
    """CommonMark's delimiter-run algorithm, simplified: strong (2) and emphasis (1), per paragraph.

    ``intraword_star``: ``*`` may open and close inside a word (Markdown); otherwise ``*`` follows
    the rule of ``_`` (reStructuredText's inline markup never starts inside a word).
    """
    text = marks.text
    breaks = [m.start() for m in _BLANK_LINE.finditer(text)] + [len(text) + 1]
    paragraph, stack = 0, []
    for m in _DELIMITERS.finditer(text):
        char = m.group()[0]
        if char not in chars or not marks.clear(m.start(), m.end()):
            continue
        while m.start() > breaks[paragraph]:
            paragraph += 1
            stack = []
        before = text[m.start() - 1] if m.start() else ""
        after = text[m.end()] if m.end() < len(text) else ""
        left = not _is_space(after) and (not _is_punct(after) or _is_space(before) or _is_punct(before))
        right = not _is_space(before) and (not _is_punct(before) or _is_space(after) or _is_punct(after))
        if char == "*" and intraword_star:
            can_open, can_close = left, right
        else:
            can_open = left and (not right or _is_punct(before))
            can_close = right and (not left or _is_punct(after))
        if char == "~" and len(m.group()) > 2:
            continue
        run = [char, m.start(), m.end(), m.end() - m.start()]  # char, inner start, inner end, left
        if can_close:
            for k in range(len(stack) - 1, -1, -1):
                opener = stack[k]
                if opener[0] != char:
                    continue
                if char == "~" and opener[3] != run[3]:
                    continue
                while opener[3] and run[3]:
                    use = opener[3] if char == "~" else (2 if opener[3] >= 2 and run[3] >= 2 else 1)
                    marks.mark(opener[2] - use, opener[2])
                    opener[2] -= use
                    opener[3] -= use
                    marks.mark(run[1], run[1] + use)
                    run[1] += use
                    run[3] -= use
                del stack[k + (0 if not opener[3] else 1):]
                if not run[3]:
                    break
        if run[3] and can_open:
            stack.append(run)


# -- Markdown ---------------------------------------------------------------------------------

_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})[^\n]*")
_RULE = re.compile(r"[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*")
_REFERENCE_DEFINITION = re.compile(r"[ ]{0,3}\[[^\]\n]+\]:[ \t]*\S+[^\n]*")
_TABLE_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*")
_BLOCK_MARKER = re.compile(r"[ \t]*(?:>[ \t]?|#{1,6}(?=[ \t]|$)[ \t]*|[*+-][ \t]+(?:\[[ xX]\][ \t]+)?|[0-9]{1,9}[.)][ \t]+)")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
_BACKTICKS = re.compile(r"(?<![`\\])`+")
_HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*?)?/?>", re.DOTALL)
_AUTOLINK = re.compile(r"<((?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)|(?:[^\s<>@]+@[^\s<>@]+))>")
_LINK = re.compile(
    r"!?\[((?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*)\]"
    r"(?:\(\s*(?:<[^<>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
    r"|\[[^\[\]\n]*\])")


def _markdown(marks: _Marks) -> None:
    text = marks.text
    fence = None
    for start, end in _lines(text):
        line = text[start:end]
        if fence is not None:
            closing = _FENCE.fullmatch(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                marks.mark(start, end)
                fence = None
            else:
                marks.mark(start, end, _LITERAL)
            continue
        opening = _FENCE.fullmatch(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in line.strip().lstrip("`")):
            marks.mark(start, end)
            fence = opening.group(1)
            continue
        if (_RULE.fullmatch(line) or (_SETEXT.fullmatch(line) and line.strip())
                or _REFERENCE_DEFINITION.fullmatch(line) or _TABLE_SEPARATOR.fullmatch(line)):
            marks.mark(start, end)
            continue
        pos = start
        while True:  # nested markers: "> - 1. item"
            m = _BLOCK_MARKER.match(text, pos, end)
            if not m or m.end() == pos:
                break
            heading = m.group().strip().startswith("#")
            marks.mark(m.start(), m.end())
            pos = m.end()
            if heading:
                closing = _CLOSING_HASHES.search(text, pos, end)
                if closing:
                    marks.mark(closing.start(), closing.end())
                break
        if line.lstrip().startswith("|"):
            for i in range(pos, end):
                if text[i] == "|" and text[i - 1] != "\\":
                    marks.mark(i, i + 1)
    _code_spans(marks)
    for m in _HTML.finditer(text):
        if marks.clear(m.start(), m.end()):
            marks.mark(m.start(), m.end())
    for m in _AUTOLINK.finditer(text):
        if marks.clear(m.start(), m.end()):
            marks.mark(m.start(), m.start() + 1)
            marks.mark(m.start(1), m.end(1), _LITERAL)  # an address is shown as it is: no emphasis in it
            marks.mark(m.end() - 1, m.end())
    _escapes(marks)
    for m in _LINK.finditer(text):
        if marks.clear(m.start(), m.start(1)) and marks.clear(m.end(1), m.end()):
            marks.mark(m.start(), m.start(1))
            marks.mark(m.end(1), m.end())
    _entities(marks)
    _emphasis(marks, "*_~", intraword_star=True)


def _code_spans(marks: _Marks) -> None:
    """A run of backticks opens a code span that the next run of the same length closes."""
    text = marks.text
    runs = [m for m in _BACKTICKS.finditer(text) if marks.clear(m.start(), m.end())]
    i = 0
    while i < len(runs):
        opener = runs[i]
        for j in range(i + 1, len(runs)):
            closer = runs[j]
            if _BLANK_LINE.search(text, opener.end(), closer.start()):
                break
            if len(closer.group()) == len(opener.group()):
                marks.mark(opener.start(), opener.end())
                marks.mark(opener.end(), closer.start(), _LITERAL)
                marks.mark(closer.start(), closer.end())
                i = j
                break
        i += 1


# -- reStructuredText -------------------------------------------------------------------------

_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*")
_TARGET = re.compile(r"[ \t]*\.\.[ \t]+_[^\n]*:[^\n]*")
_RST_MARKER = re.compile(r"[ \t]*(?:[-*+\u2022\u2023\u2043][ \t]+|(?:[0-9]+|#)[.)][ \t]+|\([0-9]+\)[ \t]+"
                         r"|\.\.[ \t]+[A-Za-z0-9_:+.-]+::[ \t]*)")
_LITERAL_MARK = re.compile(r"(?<=\S)(:)(:)[ \t]*$|(?:^|(?<=\s))(::)[ \t]*$", re.MULTILINE)
_INLINE_LITERAL = re.compile(r"(?<!`)``(?![`\s])(.+?)(?<![\s`])``(?!`)", re.DOTALL)
_INTERPRETED = re.compile(r"(:[A-Za-z0-9_.+-]+:)?`(?![`\s])([^`]+?)(?<!\s)`(:[A-Za-z0-9_.+-]+:|__?)?(?![`\w])")
_EMBEDDED_TARGET = re.compile(r"\s*<([^<>]+)>$")
_SIMPLE_REFERENCE = re.compile(r"(?<![\w`])[A-Za-z0-9]+(?:[-_.:+][A-Za-z0-9]+)*(__?)(?![\w`])")
_FOOTNOTE_REFERENCE = re.compile(r"\[(?:[0-9]+|#[\w-]*|\*|[A-Za-z][\w.-]*)\](__?)(?!\w)")


def _rst(marks: _Marks) -> None:
    text = marks.text
    for start, end in _lines(text):
        line = text[start:end]
        if _ADORNMENT.fullmatch(line) or _TARGET.fullmatch(line):
            marks.mark(start, end)
            continue
        m = _RST_MARKER.match(text, start, end)
        if m and m.end() > m.start() and text[m.start():m.end()].strip():
            marks.mark(m.start(), m.end())
    for m in _INLINE_LITERAL.finditer(text):
        if _BLANK_LINE.search(m.group()) or not marks.clear(m.start(), m.end()):
            continue
        marks.mark(m.start(), m.start(1))
        marks.mark(m.start(1), m.end(1), _LITERAL)
        marks.mark(m.end(1), m.end())
    for m in _INTERPRETED.finditer(text):
        if _BLANK_LINE.search(m.group()) or not marks.clear(m.start(), m.end()):
            continue
        shown_start, shown_end = m.start(2), m.end(2)
        target = _EMBEDDED_TARGET.search(m.group(2))
        if target and target.start() > 0:
            shown_end = m.start(2) + target.start()
        elif target:  # `<https://x>`_ shows the address
            shown_start, shown_end = m.start(2) + target.start(1), m.start(2) + target.end(1)
        marks.mark(m.start(), shown_start)
        marks.mark(shown_end, m.end())
    _escapes(marks)
    for pattern in (_SIMPLE_REFERENCE, _FOOTNOTE_REFERENCE):
        for m in pattern.finditer(text):
            if marks.clear(m.start(1), m.end(1)):
                marks.mark(m.start(1), m.end(1))
    for m in _LITERAL_MARK.finditer(text):
        group = 2 if m.group(2) else 3
        if marks.clear(m.start(group), m.end(group)):
            marks.mark(m.start(group), m.end(group))
    _emphasis(marks, "*", intraword_star=False)
