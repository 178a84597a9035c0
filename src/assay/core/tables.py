"""Every plain-text table assay prints, from one renderer.

``render(headers, rows)`` lays out raw cell values: a column is as wide as its widest cell, so long
pipeline names or query ids never push a row out of line. The layout is fixed text, never fitted to
a terminal: no wrapping, no truncation, no colour, the same bytes under a terminal, a pipe or pytest,
so golden files and transcripts stay stable.

Cells come from user files (pipeline names, query ids, hard classes), so each one is passed through
``escape.terminal``: ``[bold]x`` shows as typed and a terminal escape shows as ``\\x1b``.
``markdown=True`` writes a GitHub table instead, each cell escaped by ``escape.markdown_cell``.

The layout is rich's Table with a rule under the header (tests/core/reference_tables.py keeps that renderer, and
tests/core/test_tables.py checks the two give the same text), done here with rich's cell widths alone: building
the Table and its Console took a tenth of `assay report`'s start-up.
"""

from __future__ import annotations

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

    # rich only here, for the width of a cell in a terminal: `assay --help` and JSON or CSV never import it
    from rich.cells import cell_len

    head_cells = [_text(h) for h in headers]
    body = [[_text(c) for c in r] for r in rows]
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in body]) for i, h in enumerate(head_cells)]
    justify = [align[i] or _auto_align([r[i] for r in rows]) for i in range(len(headers))]
    # the rule spans the columns and the two spaces between them; rich draws a last column of no width as one
    rule = "-" * (sum(widths[:-1]) + 2 * (len(widths) - 1) + max(widths[-1], 1))
    lines = [_row(head_cells, widths, justify, cell_len), rule] + [_row(r, widths, justify, cell_len) for r in body]
    return "\n".join(line.rstrip() for line in lines)


def _row(cells: list[str], widths: list[int], justify: list[str], cell_len) -> str:
    """One row: each cell padded with spaces to its column's width in terminal cells, on the right or (a
    right-aligned cell, its trailing spaces dropped first, as rich's right justification does) on the
    left; columns two spaces apart. A column of no width shows nothing (rich crops a zero-width mark there)."""
    out = []
    for cell, width, just in zip(cells, widths, justify):
        if width == 0:
            out.append("")
        elif just == "right":
            cell = cell.rstrip()
            out.append(" " * (width - cell_len(cell)) + cell)
        else:
            out.append(cell + " " * (width - cell_len(cell)))
    return "  ".join(out)


__all__ = ["render", "ALIGNS"]
