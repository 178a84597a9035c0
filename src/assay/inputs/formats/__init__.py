"""Streaming readers for standard test-collection formats.

One module per format: ``beir`` (a dataset directory of ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/<split>.tsv``) and ``trec`` (``<DOC>`` files, ``<top>`` topics, qrels and run files).
Every reader is a generator that reads its file one line at a time and yields one record at a
time, so memory does not grow with the collection; the one exception is the set of ids a reader
keeps to refuse duplicates (O(number of ids) strings, never the records). A file that does not
parse raises ``FormatError`` naming the file, the 1-based line and what was expected there.

Ids are kept as the exact strings in the file: ``"007"`` stays ``"007"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import FormatError


@dataclass(frozen=True)
class Doc:
    doc_id: str
    title: str  # "" when the collection gives none
    text: str


@dataclass(frozen=True)
class Query:
    query_id: str
    text: str


@dataclass(frozen=True)
class Qrel:
    query_id: str
    doc_id: str
    grade: int


def numbered_lines(path: str | Path, shown: str | None = None) -> Iterator[tuple[int, str]]:
    """Each line of a UTF-8 file with its 1-based number, line ending removed, read incrementally.

    Lines are decoded one by one (not the file as a whole) so an invalid byte is reported at its
    line; a byte-order mark at the start is dropped. ``shown``: the description of a progress task
    following the bytes read (``assay.core.progress``).
    """
    from assay.core import progress

    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror or exc}") from exc
    with handle, progress.task(shown, _size(handle), "bytes") if shown else nullcontext() as task:
        done = 0
        for lineno, raw in enumerate(handle, start=1):
            if task is not None:
                done += len(raw)
                if not lineno % 4096:
                    task.update(completed=done)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FormatError(path, lineno, f"not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                                                "expected a UTF-8 text file") from exc
            if lineno == 1:
                line = line.removeprefix("\ufeff")
            yield lineno, line.rstrip("\r\n")


def _size(handle) -> int | None:
    try:
        return os.fstat(handle.fileno()).st_size or None
    except OSError:
        return None


INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # grades and ranks are stored as 32-bit INTEGERs


def whole_number(text: str, path, lineno: int, what: str, expected: str) -> int:
    """``text`` (already matched as ``[+-]?[0-9]+``) as an int, or a FormatError when it lies outside
    the 32-bit range the warehouse stores. Its length is checked before ``int()``, which refuses
    strings of over 4300 digits with a ValueError."""
    digits = text.lstrip("+-").lstrip("0")
    value = int(text) if len(digits) <= 12 else None
    if value is None or not INT_MIN <= value <= INT_MAX:
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"
        raise FormatError(path, lineno, f"{what} {shown!r} is out of range; {expected} between {INT_MIN} and {INT_MAX}")
    return value
