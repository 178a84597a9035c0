"""The table renderer as it stood before issue 14 (commit 52b760e): rich's Table and Console, kept verbatim
below this docstring as the reference assay.core.tables must match character for character (tests/core/test_tables.py).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from numbers import Number

from assay.core import escape

ALIGNS = ("left", "right")
# A cell that reads as a figure: a number, a signed delta, a p-value like <0.001, an interval like
# [0.416, 0.684] or a value with one, marked ▲ or ▼ (assay.present.report_runs). Such columns are right-aligned
# unless the caller says otherwise.
_FIGURE = re.compile(r"[<>=≈]?[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?[▲▼]?")
_PLACEHOLDERS = frozenset({"", "-", "n/a", "NULL"})
# Above this many rows the rows are aligned cell by cell (``_row``) under the header rich lays out:
# the same text, where a rich Table takes about a millisecond a row (20 s for a 20,000-row
# `eval-trec --per-query`).
TABLE_ROWS = 300


def _text(value) -> str:
    return "" if value is None else escape.terminal(value)


def _is_figure(value) -> bool:
    if isinstance(value, Number) and not isinstance(value, bool):
        return True
    if not isinstance(value, str):
        return False
    tokens = value.replace("[", " ").replace("]", " ").replace(",", " ").split()
    return bool(tokens) and all(_FIGURE.fullmatch(t) for t in tokens)


def _auto_align(column: list) -> str:
    """right when the column holds figures and placeholders only (at least one figure), else left."""
    figures = [v for v in column if not (v is None or (isinstance(v, str) and v in _PLACEHOLDERS))]
    return "right" if figures and all(_is_figure(v) for v in figures) else "left"


def _markdown(headers: list, rows: list) -> str:
    cell = escape.markdown_cell
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell("" if c is None else c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def render(headers: Sequence, rows: Sequence[Sequence], *, align: Sequence[str | None] | None = None,
           markdown: bool = False) -> str:
    """The table as text, lines joined by newlines, no newline at the end.

    ``rows`` hold raw values, one per header: ``str()`` of each is shown (``None`` as an empty cell),
    escaped here, so callers never escape cells themselves. ``align`` gives each column ``"left"`` or
    ``"right"`` (``None`` in a place: decide from the cells); without it, columns of figures (numbers,
    and strings such as ``0.554``, ``+0.012``, ``<0.001``, ``[0.416, 0.684]``, with ``-`` or empty
    cells among them) are right-aligned and the rest left-aligned. Plain text: a header row, a rule of
    dashes, then the rows, columns two spaces apart, trailing spaces trimmed.
    """
    headers, rows = list(headers), [list(r) for r in rows]
    for i, r in enumerate(rows):
        if len(r) != len(headers):
            raise ValueError(f"row {i} has {len(r)} cells for {len(headers)} columns")
    if markdown:
        return _markdown(headers, rows)
    if align is None:
        align = [None] * len(headers)
    if len(align) != len(headers) or any(a not in (*ALIGNS, None) for a in align):
        raise ValueError(f"align needs one of {ALIGNS} or None per column, got {list(align)!r}")

    # rich only here: `assay --help` and every JSON or CSV output never import it
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    head_cells = [_text(h) for h in headers]
    body = [[_text(c) for c in r] for r in rows]
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in body]) for i, h in enumerate(head_cells)]
    justify = [align[i] or _auto_align([r[i] for r in rows]) for i in range(len(headers))]
    table = Table(box=_rule_under_header(), show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  show_header=True, highlight=False)
    for head, width, just in zip(head_cells, widths, justify):
        # a fixed width: rich measures nothing, and no column is ever shrunk to fit a terminal
        table.add_column(Text(head), justify=just, no_wrap=True, width=width)
    laid_out = len(body) <= TABLE_ROWS
    for r in body if laid_out else ():
        table.add_row(*(Text(c) for c in r))
    out = io.StringIO()
    # every setting pinned, nothing read from the environment (COLUMNS, TERM, NO_COLOR, FORCE_COLOR,
    # Jupyter): the text is the same wherever it is printed, and wide enough for every cell
    console = Console(file=out, width=sum(widths) + 2 * len(widths) + 1, color_system=None, force_terminal=False,
                      force_jupyter=False, force_interactive=False, legacy_windows=False, no_color=True,
                      markup=False, emoji=False, highlight=False, soft_wrap=False, _environ={})
    console.print(table)
    lines = out.getvalue().splitlines()
    if not laid_out:
        lines += [_row(r, widths, justify) for r in body]
    return "\n".join(line.rstrip() for line in lines)


def _row(cells: list[str], widths: list[int], justify: list[str]) -> str:
    """One body row as the table lays it out (tests/core/test_tables.py checks they agree): each cell
    aligned by rich's ``Text.align`` in its column's width (a right-aligned cell loses its trailing
    spaces first, as rich's right justification does), two spaces apart."""
    from rich.text import Text

    cells_out = []
    for cell, width, just in zip(cells, widths, justify):
        text = Text(cell.rstrip() if just == "right" else cell)
        text.align(just, width)
        cells_out.append(text.plain)
    return "  ".join(cells_out)


def _rule_under_header():
    """rich's SIMPLE_HEAD box with an ASCII rule: nothing but a line of dashes under the header, the
    same bytes whatever the output encoding. Each column is one space of padding plus the box's
    blank divider from the next: two spaces apart."""
    from rich.box import Box

    return Box("    \n"
               "    \n"
               " -- \n"
               "    \n"
               "    \n"
               "    \n"
               "    \n"
               "    \n", ascii=True)


__all__ = ["render", "ALIGNS"]
