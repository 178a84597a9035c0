"""DOCX (Word 2007 and later) to text with python-docx.

The body's paragraphs and tables in document order, each paragraph (and each table) a block, blocks
joined by a blank line; a table row is one line, its cells joined by tabs (a cell merged across columns
once). Tabs and line breaks inside a paragraph are kept. Headers, footers, footnotes and comments are
not body text and are left out. A DOCX has no pages until a word processor lays it out, so none are kept.

A ``ReadBudget`` (``assay.inputs.corpus.budget``) bounds what it unpacks: the sizes its zip declares for its parts,
summed before python-docx opens it (Python's zip reader stops a part at its declared size), and the time, looked
at before each block.
"""

from __future__ import annotations

import io
from importlib import metadata

from assay.inputs.corpus.budget import OverBudget, ReadBudget

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


def _unpacked(data: bytes, budget: ReadBudget) -> None:
    """Spend what the zip's parts declare they unpack to, before any is unpacked."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            sizes = [info.file_size for info in archive.infolist()]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return  # not a zip: python-docx says so below, in its words
    budget.spend(sum(sizes))


def extract(data: bytes, budget: ReadBudget | None = None) -> str:
    """The text of a DOCX's bytes; past ``budget`` (bytes unpacked, seconds) a DocxUnreadable saying which."""
    import docx
    from docx.table import Table

    try:
        if budget is not None:
            _unpacked(data, budget)
        document = docx.Document(io.BytesIO(data))
        blocks = []
        for block in document.iter_inner_content():
            if budget is not None:
                budget.check_time()
            text = _table(block) if isinstance(block, Table) else block.text
            if text.strip():
                blocks.append(text.rstrip())
    except OverBudget as exc:
        raise DocxUnreadable(str(exc)) from None
    except Exception as exc:  # a damaged or mislabelled file: python-docx raises many kinds
        detail = str(exc).strip() or type(exc).__name__
        raise DocxUnreadable(f"cannot be read as a DOCX ({LIBRARY}: {detail[:200]}); re-save it from a word "
                             "processor, or remove it") from None
    return "\n\n".join(blocks) + ("\n" if blocks else "")
