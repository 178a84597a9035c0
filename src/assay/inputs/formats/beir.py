"""BEIR datasets: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` in one directory.

The layout of Thakur et al. (2021) as the ``beir`` package loads it:

- ``corpus.jsonl``: one JSON object a line with ``_id``, ``text`` and an optional ``title``;
- ``queries.jsonl``: one JSON object a line with ``_id`` and ``text``;
- ``qrels/<split>.tsv``: the header ``query-id<TAB>corpus-id<TAB>score``, then one judgment a line.

``metadata`` and any other field is ignored. Blank lines are skipped. Stricter than ``beir``'s
own loader, which would silently keep the last of two records with one id: ``_id``, ``title`` and
``text`` must be JSON strings, an id may not be empty or repeat within a file (the readers keep
the set of ids seen, O(number of ids) strings). A document with neither title nor text is read as
it is (Cranfield ships two, one of them judged relevant); the import keeps it and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from assay.core.errors import FormatError
from assay.inputs.formats import Doc, Qrel, Query, numbered_lines, whole_number

QRELS_HEADER = ("query-id", "corpus-id", "score")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def splits(dataset_dir: str | Path) -> list[str]:
    """The split names a dataset judges, from its ``qrels/*.tsv`` files, sorted ([] when none)."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise FormatError(root, None, "not a directory; expected a BEIR dataset directory "
                                      "holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv")
    return sorted(p.stem for p in (root / "qrels").glob("*.tsv") if p.is_file())


def read_corpus(path: str | Path) -> Iterator[Doc]:
    """The documents of a BEIR ``corpus.jsonl``, one at a time; a missing title reads as ""."""
    seen: set[str] = set()
    for lineno, record in _records(path, "document"):
        doc_id = _unique_id(record, path, lineno, seen)
        title = _string_field(record, "title", path, lineno, required=False)
        text = _string_field(record, "text", path, lineno, required=True)
        yield Doc(doc_id, title, text)


def read_queries(path: str | Path) -> Iterator[Query]:
    """The queries of a BEIR ``queries.jsonl``, one at a time."""
    seen: set[str] = set()
    for lineno, record in _records(path, "query"):
        query_id = _unique_id(record, path, lineno, seen)
        text = _string_field(record, "text", path, lineno, required=True)
        if not text.strip():
            raise FormatError(path, lineno, f"query {query_id!r} has blank 'text'; expected the query text")
        yield Query(query_id, text)


def read_qrels(path: str | Path) -> Iterator[Qrel]:
    """The judgments of a BEIR ``qrels/<split>.tsv``, one at a time, after checking its header.

    Columns are split on tabs, or on any whitespace in a line without tabs.
    """
    expected = f"expected 3 columns {_tabbed(QRELS_HEADER)}"
    lines = numbered_lines(path, f"reading {Path(path).name}")
    first = next(lines, None)
    if first is None:
        raise FormatError(path, None, f"empty file; expected the header {_tabbed(QRELS_HEADER)} on line 1")
    header = _columns(first[1])
    if tuple(header) != QRELS_HEADER:
        if len(header) == 3 and _INTEGER.fullmatch(header[2]):
            problem = "header missing: line 1 is already a judgment"
        else:
            problem = f"wrong header {first[1]!r}"
        raise FormatError(path, 1, f"{problem}; expected the header {_tabbed(QRELS_HEADER)}")
    for lineno, line in lines:
        if not line.strip():
            continue
        columns = _columns(line)
        if len(columns) != 3:
            raise FormatError(path, lineno, f"{expected}, found {len(columns)}: {line!r}")
        query_id, doc_id, score = columns
        if not query_id or not doc_id:
            raise FormatError(path, lineno, f"empty {'query-id' if not query_id else 'corpus-id'}; {expected}")
        if not _INTEGER.fullmatch(score):
            raise FormatError(path, lineno, f"score {score!r} is not an integer; expected a whole-number grade")
        yield Qrel(query_id, doc_id, whole_number(score, path, lineno, "score", "expected a whole-number grade"))


def _records(path, kind: str) -> Iterator[tuple[int, dict]]:
    for lineno, line in numbered_lines(path, f"reading {Path(path).name}"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(path, lineno, f"invalid JSON ({exc.msg} at column {exc.colno}); "
                                            f"expected one {kind} object per line") from exc
        except (ValueError, RecursionError) as exc:  # an integer of over 4300 digits; nesting past the stack
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
            raise FormatError(path, lineno, f"invalid JSON ({why}); expected one {kind} object per line") from None
        if not isinstance(record, dict):
            raise FormatError(path, lineno, f"found a JSON {_json_type(record)}; expected one {kind} object per line")
        yield lineno, record


def _unique_id(record: dict, path, lineno: int, seen: set[str]) -> str:
    record_id = _string_field(record, "_id", path, lineno, required=True)
    if not record_id.strip():
        raise FormatError(path, lineno, "'_id' is empty; expected a non-empty id")
    if record_id in seen:
        raise FormatError(path, lineno, f"duplicate _id {record_id!r}; expected each id once per file")
    seen.add(record_id)
    return record_id


def _string_field(record: dict, field: str, path, lineno: int, *, required: bool) -> str:
    if field not in record:
        if required:
            raise FormatError(path, lineno, f"missing '{field}'; expected an object with '_id' and 'text'")
        return ""
    value = record[field]
    if not isinstance(value, str):
        shown = json.dumps(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise FormatError(path, lineno, f"'{field}' is a JSON {_json_type(value)} ({shown}); "
                                        f"expected a string, e.g. \"{field}\": \"...\"")
    return value


def _columns(line: str) -> list[str]:
    # Trailing whitespace is layout; a leading tab is an empty first column.
    stripped = line.rstrip()
    if "\t" in stripped:
        return [c.strip() for c in stripped.split("\t")]
    return stripped.split()


def _tabbed(names) -> str:
    return repr("\t".join(names))


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)
