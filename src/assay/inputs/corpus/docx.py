"""DOCX (Word 2007 and later) to text with python-docx.

The body's paragraphs and tables in document order, each paragraph (and each table) a block, blocks
joined by a blank line; a table row is one line, its cells joined by tabs (a cell merged across columns
once). Tabs and line breaks inside a paragraph are kept. Headers, footers, footnotes and comments are
not body text and are left out. A DOCX has no pages until a word processor lays it out, so none are kept.
"""

from __future__ import annotations

import io
from importlib import metadata

LIBRARY = "python-docx"
READER_VERSION = 1


class DocxUnreadable(Exception):
    """The file cannot be read as a DOCX; the message says why."""


def identity() -> dict:
    return {"library": f"{LIBRARY} {metadata.version(LIBRARY)}", "reader": READER_VERSION}


def _table(table) -> str:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split("\n")).strip())
        if any(cells):
            rows.append("\t".join(cells))
    return "\n".join(rows)


def extract(data: bytes) -> str:
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = []
        for block in document.iter_inner_content():
            text = _table(block) if isinstance(block, Table) else block.text
            if text.strip():
                blocks.append(text.rstrip())
    except Exception as exc:  # a damaged or mislabelled file: python-docx raises many kinds
        detail = str(exc).strip() or type(exc).__name__
        raise DocxUnreadable(f"cannot be read as a DOCX ({LIBRARY}: {detail[:200]}); re-save it from a word "
                             "processor, or remove it") from None
    return "\n\n".join(blocks) + ("\n" if blocks else "")
