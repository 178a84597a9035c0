"""A warehouse written by a newer DuckDB than this assay's: which DuckDB wrote it, and the one-line error.

DuckDB reads the files of older versions, never those of newer ones (DuckDB 1.5 refuses a file DuckDB 2 wrote:
"created with a newer version of DuckDB"). assay pins the DuckDB its Ibis extra works with (pyproject.toml), so a
warehouse written by an assay on a newer DuckDB is refused here, and the way back is a copy written by that newer
DuckDB in this one's format (docs/install.md, "A warehouse written by a newer DuckDB").

A DuckDB file starts with a 4,096-byte header block: an 8-byte checksum, the magic ``DUCK`` at byte 8, the storage
version (8 bytes), four flag words, then at byte 52 the writing library's version (``v2.0.1``, 32 bytes, NUL padded).
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.core.errors import WarehouseError

NEWER = "created with a newer version of DuckDB"  # what DuckDB says, 1.1 to 2.0
MAGIC_AT, VERSION_AT, VERSION_LEN = 8, 52, 32


def writer_version(path: Path) -> str | None:
    """The version of the DuckDB that wrote ``path`` ("2.0.1"), from its header; None when the header lacks one."""
    try:
        with open(path, "rb") as f:
            head = f.read(VERSION_AT + VERSION_LEN)
    except OSError:
        return None
    if head[MAGIC_AT:MAGIC_AT + 4] != b"DUCK":
        return None
    found = re.match(rb"v(\d+\.\d+\.\d+[0-9A-Za-z.\-]*)\x00", head[VERSION_AT:] + b"\x00")
    return found.group(1).decode("ascii") if found else None


def newer_error(exc, path: Path, running: str) -> WarehouseError | None:
    """The one-line error when DuckDB ``running`` refused ``path`` as written by a newer DuckDB; None otherwise.

    It names the DuckDB that wrote the file and says how to convert it: with that DuckDB, copy the database into
    a new file in the storage format of ``running`` (DuckDB's ``STORAGE_VERSION``), which this assay opens."""
    if NEWER not in str(exc):
        return None
    writer = writer_version(path)
    major, minor = running.split(".")[:2]
    with_writer = f"DuckDB {writer}" if writer else "that newer DuckDB"
    copy = f"{path.stem}-duckdb{major}.{minor}{path.suffix}"
    sql = (f"ATTACH {_literal(str(path))} AS old (READ_ONLY); ATTACH {_literal(str(path.with_name(copy)))} AS new "
           f"(STORAGE_VERSION 'v{major}.{minor}.0'); COPY FROM DATABASE old TO new")
    return WarehouseError(
        f"warehouse {path} was written by {'DuckDB ' + writer if writer else 'a newer DuckDB'}, which this "
        f"assay's DuckDB {running} cannot read; convert it once with {with_writer} (in another Python "
        f"environment, see docs/install.md): {sql}; then use --warehouse {path.with_name(copy)}")


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (a quote doubled) for the user to paste; never run by assay."""
    return "'" + text.replace("'", "''") + "'"
