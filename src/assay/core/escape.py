"""Escaping for every output format assay writes: one function per format.

Hard classes, pipeline names, query, chunk and run ids, rule texts and model names come from user
files, so every renderer passes each value it did not write itself through the function of its
format at the point where the value enters the output. JSON output needs none of this
(``json.dumps`` escapes control characters). A renderer's own tabs, newlines and table pipes are
added after escaping, so they are the only ones in its output.
"""

from __future__ import annotations

import html as _html
import re

# Bidirectional controls ("Trojan Source", CVE-2021-42574): invisible, and they reorder what a
# terminal or a browser shows, so a value could appear to be another value.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# C0 controls, DEL, C1 controls, lone surrogates (which no UTF-8 stream can carry), the Unicode
# line and paragraph separators (a line break to some viewers) and the bidirectional controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029" + "".join(sorted(_BIDI)) + "]")


_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text) -> str:
    r"""``text`` (``str()`` of any other value) safe to print to a terminal, one line.

    Every C0 control character (U+0000-U+001F, tab, newline and carriage return included), DEL
    (U+007F), every C1 control (U+0080-U+009F), every lone surrogate, U+2028/U+2029 and the
    bidirectional controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069) is replaced by its
    Python-style escape: ESC becomes the four characters ``\x1b``, U+202E becomes ``\u202e``,
    tab, newline and carriage return become ``\t``, ``\n`` and ``\r``.
    Everything else, printable Unicode included, is kept as it is; a backslash already in the text
    is kept too, so ``\x1b`` in the output may have been either (never a raw ESC).
    """
    text = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(lambda m: _visible(m.group()), text)


_MARKDOWN_SPECIAL = re.compile(r"([\\`|]|\](?=\())")


def markdown_cell(text) -> str:
    r"""``text`` as the content of a Markdown (GitHub-flavoured) table cell or inline text.

    In this order: CR LF, CR and LF become one space each (a cell is one line); ``&``, ``<`` and
    ``>`` become ``&amp;``, ``&lt;`` and ``&gt;`` (no HTML tag or entity passes through); a
    backslash, backtick, ``|`` and a ``]`` followed by ``(`` get a backslash before them (no column
    break, code span, inline link or image; an interval like ``[0.1, 0.2]`` is left as it is); then
    the remaining control characters are escaped as ``terminal`` escapes them.
    The rendered cell reads as the original text.
    """
    text = text if isinstance(text, str) else str(text)
    text = re.sub(r"\r\n|\r|\n", " ", text)
    text = _html.escape(text, quote=False)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return terminal(text)


# Cells a spreadsheet reads as a formula (OWASP "CSV injection"): =, +, -, @, and tab and CR,
# which some spreadsheets skip before looking for the others.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A CSV cell's value with a formula prefix neutralised: only strings change.

    A string starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a single
    quote in front (``=1+1`` is written ``'=1+1``), so a spreadsheet shows it as text. Anything
    that is not a ``str`` (a float like -0.05, an int, None, a bool) comes back unchanged: numbers
    stay numbers. Quoting of commas, quotes and newlines is left to the ``csv`` module.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def printed_csv_cell(value):
    """A cell of CSV that assay prints to standard output (``--format csv``): a string is escaped
    as ``terminal`` escapes it, then neutralised as ``csv_cell`` does; other values come back
    unchanged. Files that ``assay export`` writes use ``csv_cell`` alone and keep the exact text."""
    return csv_cell(terminal(value)) if isinstance(value, str) else value


def _xml_char_ok(code: int) -> bool:
    # XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def _xml_chars(text: str) -> str:
    """Characters XML 1.0 forbids (most C0 controls, lone surrogates, U+FFFE/U+FFFF) as U+FFFD."""
    if all(_xml_char_ok(ord(ch)) for ch in text):
        return text
    return "".join(ch if _xml_char_ok(ord(ch)) else "\ufffd" for ch in text)


def xml_text(text) -> str:
    """``text`` as XML 1.0 character data: every character XML 1.0 does not allow becomes U+FFFD
    (the replacement character), then ``&``, ``<`` and ``>`` become entities."""
    text = text if isinstance(text, str) else str(text)
    return _xml_chars(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attr(text) -> str:
    """``text`` as a double-quoted XML 1.0 attribute value, quotes included: characters XML 1.0 does
    not allow become U+FFFD, ``& < > "`` become entities, and tab, newline and carriage return
    become character references (``&#9;``, ``&#10;``, ``&#13;``) so attribute normalisation keeps them."""
    body = xml_text(text).replace('"', "&quot;")
    body = body.replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;")
    return f'"{body}"'


def html(text) -> str:
    r"""``text`` as HTML text or a double- or single-quoted attribute value: ``& < > " '`` become
    entities, characters HTML forbids (controls other than tab, newline, CR and form feed,
    lone surrogates, noncharacters such as U+FFFE) become U+FFFD, and the bidirectional controls
    show as their escapes (U+202E as the six characters ``\u202e``, as ``terminal`` shows them): a
    character reference would still reorder what the browser shows."""
    text = text if isinstance(text, str) else str(text)
    text = "".join("\ufffd" if _html_forbidden(ch) else ch for ch in text)
    return _html.escape(bidi_visible(text), quote=True)


_BIDI_RE = re.compile("[" + "".join(sorted(_BIDI)) + "]")


def bidi_visible(text: str) -> str:
    r"""``text`` with every bidirectional control shown as its escape (``\u202e``), everything else kept: for
    markup assay did not write itself (a chart's SVG) and, once more, for a whole HTML page."""
    return _BIDI_RE.sub(lambda m: _visible(m.group()), text)


def _html_forbidden(ch: str) -> bool:
    code = ord(ch)
    if code in (0x9, 0xA, 0xC, 0xD):
        return False
    if code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
        return True
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


__all__ = ["terminal", "markdown_cell", "csv_cell", "printed_csv_cell", "xml_text", "xml_attr", "html", "bidi_visible"]


def terminal_lines(text) -> str:
    """``terminal`` applied to each line of a message assay composed itself: its own line breaks are kept,
    every control character a value brought into a line is escaped (messages, progress, errors)."""
    return "\n".join(terminal(line) for line in str(text).split("\n"))
