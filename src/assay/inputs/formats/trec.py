"""TREC files: ``<DOC>`` document collections, ``<top>`` topics, qrels and run files.

Documents and topics are SGML-ish blocks. A reader holds one block at a time (plus the set of
ids seen, to refuse duplicates), so memory follows the largest document, not the collection.
The block tags may sit on their own lines or inline (``<DOC><DOCNO>1</DOCNO>...</DOC>``); tags
match in any letter case. Ids are kept as written: a topic ``Number: 051`` stays ``"051"``
even where the qrels say ``51``.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import ConfigError, FormatError
from assay.inputs.formats import Doc, Qrel, Query, numbered_lines, whole_number

# Elements whose markup is dropped from a document's text while their content stays; any other
# tag is left in the text as written.
KNOWN_CONTAINERS = ("TEXT", "HEADLINE", "TITLE", "HEAD", "HL", "P", "LP", "LEADPARA", "BYLINE", "DATELINE")
TOPIC_FIELDS = ("title", "desc", "narr")

_DOCNO = re.compile(r"<DOCNO>(.*?)</DOCNO>", re.I | re.S)
_TITLE = re.compile(r"<(HEADLINE|TITLE)>(.*?)</\1\s*>", re.I | re.S)
_TEXT = re.compile(r"<TEXT>(.*?)</TEXT\s*>", re.I | re.S)
_CONTAINER_TAG = re.compile(rf"</?(?:{'|'.join(KNOWN_CONTAINERS)})(?:\s[^>]*)?>", re.I)
_TOPIC_TAG = re.compile(r"<(/?)([A-Za-z]+)(?:\s[^>]*)?>")
# Classic topics write the tag and then a label: "<num> Number: 301", "<desc> Description:".
_TOPIC_LABELS = {"num": "number", "title": "topic", "desc": "description", "narr": "narrative"}
_TOPIC_ALIASES = {"description": "desc", "narrative": "narr"}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

QRELS_COLUMNS = "query_id iteration doc_id relevance"
RUN_COLUMNS = "query_id Q0 doc_id rank score tag"


def read_docs(path: str | Path) -> Iterator[Doc]:
    """The documents of a TREC ``<DOC>`` file, one at a time.

    ``<DOCNO>`` is the id. The text is the content of the ``<TEXT>`` elements (joined by a
    newline) when there are any, else everything in the block but ``<DOCNO>``; a
    ``<HEADLINE>`` or ``<TITLE>`` element becomes the title (else "") and leaves the text. Tags
    of ``KNOWN_CONTAINERS`` are dropped; nothing else is changed but surrounding whitespace.
    """
    seen: set[str] = set()
    for block in _blocks(path, "DOC"):
        body = block.body
        docnos = list(_DOCNO.finditer(body))
        if not docnos:
            raise FormatError(path, block.start, "<DOC> without <DOCNO>; expected <DOCNO>id</DOCNO> in every <DOC>")
        if len(docnos) > 1:
            raise FormatError(path, block.line_at(docnos[1].start()),
                              "a second <DOCNO> in one <DOC>; expected exactly one")
        doc_id = docnos[0].group(1).strip()
        lineno = block.line_at(docnos[0].start())
        if not doc_id:
            raise FormatError(path, lineno, "empty <DOCNO>; expected <DOCNO>id</DOCNO>")
        if doc_id in seen:
            raise FormatError(path, lineno, f"duplicate DOCNO {doc_id!r}; expected each id once per file")
        seen.add(doc_id)
        body = _DOCNO.sub("", body)
        title = " ".join(t for t in (_strip_markup(m.group(2)) for m in _TITLE.finditer(body)) if t)
        body = _TITLE.sub("", body)
        texts = [m.group(1) for m in _TEXT.finditer(body)]
        text = "\n".join(_strip_markup(t) for t in texts) if texts else _strip_markup(body)
        yield Doc(doc_id, title, text)


def read_topics(path: str | Path, fields: tuple[str, ...] = ("title",)) -> Iterator[Query]:
    """The topics of a TREC topic file as queries, one at a time.

    Both ``<top><num>1</num><title>...</title></top>`` and the classic unclosed form
    (``<top> <num> Number: 301 <title> ... <desc> Description: ... <narr> Narrative: ...``)
    read; a field runs to the next tag and loses its label. The query text is the ``fields``
    asked for, in that order, joined by a space; each must be present in every topic.
    """
    wanted = (fields,) if isinstance(fields, str) else tuple(fields)
    unknown = [f for f in wanted if f not in TOPIC_FIELDS]
    if not wanted or unknown:
        raise ConfigError(f"topic fields {list(wanted)!r} not understood; "
                          f"choose one or more of {', '.join(TOPIC_FIELDS)}")
    return _read_topics(path, wanted)


def read_qrels(path: str | Path) -> Iterator[Qrel]:
    """Judgments from a TREC qrels file, ``query_id iteration doc_id relevance`` a line.

    Every grade is kept as written, negative ones included: trec_eval counts a document as
    relevant only at grade >= 1, so grades <= 0 mean judged non-relevant, which is not the same
    as unjudged. The iteration column is ignored.
    """
    for lineno, columns in _rows(path, 4, QRELS_COLUMNS):
        query_id, _iteration, doc_id, grade = columns
        if not _INTEGER.fullmatch(grade):
            raise FormatError(path, lineno, f"relevance {grade!r} is not an integer; "
                                            f"expected 4 columns {QRELS_COLUMNS!r} with a whole-number relevance")
        yield Qrel(query_id, doc_id, whole_number(grade, path, lineno, "relevance", "expected a whole number"))


def read_run(path: str | Path) -> Iterator[tuple[str, str, int, float, str]]:
    """Rows of a TREC run file, ``query_id Q0 doc_id rank score tag`` a line, as
    ``(query_id, doc_id, rank, score, tag)``. The Q0 column is ignored, as trec_eval does."""
    for lineno, columns in _rows(path, 6, RUN_COLUMNS):
        query_id, _q0, doc_id, rank, score, tag = columns
        if not _INTEGER.fullmatch(rank):
            raise FormatError(path, lineno, f"rank {rank!r} is not an integer; expected 6 columns {RUN_COLUMNS!r}")
        value = float(score) if _NUMBER.fullmatch(score) else math.nan
        if not math.isfinite(value):
            raise FormatError(path, lineno, f"score {score!r} is not a finite number; "
                                            f"expected 6 columns {RUN_COLUMNS!r}")
        yield query_id, doc_id, whole_number(rank, path, lineno, "rank", "expected a whole number"), value, tag


@dataclass(frozen=True)
class _Block:
    """The text between an opening and a closing tag, and where each of its lines starts."""

    start: int  # line of the opening tag
    body: str
    line_offsets: list[int]  # offset in body of the start of line start, start + 1, ...

    def line_at(self, offset: int) -> int:
        return self.start + bisect_right(self.line_offsets, offset) - 1


def _blocks(path, tag: str) -> Iterator[_Block]:
    """Each ``<tag>...</tag>`` block of a file, read line by line; only whitespace may lie between."""
    tags = re.compile(rf"(<{tag}(?:\s[^>]*)?>|</{tag}\s*>)", re.I)
    parts: list[str] | None = None
    start = size = 0
    offsets: list[int] = []
    lineno = 0
    for lineno, line in numbered_lines(path, f"reading {Path(path).name}"):
        if parts is not None:
            offsets.append(size)
        for i, piece in enumerate(tags.split(line)):
            if i % 2 == 0:
                if parts is not None:
                    parts.append(piece)
                    size += len(piece)
                elif piece.strip():
                    shown = piece.strip()
                    shown = shown if len(shown) <= 40 else shown[:37] + "..."
                    raise FormatError(path, lineno, f"text outside a <{tag}> block ({shown!r}); "
                                                    f"expected only <{tag}>...</{tag}> blocks")
            elif piece.startswith("</"):
                if parts is None:
                    raise FormatError(path, lineno, f"</{tag}> without an open <{tag}>; expected <{tag}> first")
                yield _Block(start, "".join(parts), offsets)
                parts = None
            else:
                if parts is not None:
                    raise FormatError(path, lineno, f"<{tag}> inside the <{tag}> opened on line {start}; "
                                                    f"expected </{tag}> first")
                parts, start, size, offsets = [], lineno, 0, [0]
        if parts is not None:
            parts.append("\n")
            size += 1
    if parts is not None:
        raise FormatError(path, start, f"<{tag}> never closed (end of file at line {lineno}); expected </{tag}>")


def _strip_markup(text: str) -> str:
    return _CONTAINER_TAG.sub("", text).strip()


def _read_topics(path, wanted: tuple[str, ...]) -> Iterator[Query]:
    seen: set[str] = set()
    for block in _blocks(path, "top"):
        fields = _topic_fields(block.body)
        if "num" not in fields:
            raise FormatError(path, block.start, "<top> without <num>; expected <num>id</num> in every topic")
        query_id, at = fields["num"]
        lineno = block.line_at(at)
        if not query_id:
            raise FormatError(path, lineno, "empty <num>; expected <num>id</num> (or '<num> Number: id')")
        if query_id in seen:
            raise FormatError(path, lineno, f"duplicate topic number {query_id!r}; expected each id once per file")
        seen.add(query_id)
        tags = ", ".join(f"<{f}>" for f in wanted)
        missing = [f for f in wanted if f not in fields]
        if missing:
            raise FormatError(path, block.start,
                              f"topic {query_id!r} has no <{missing[0]}>; expected {tags} in every topic")
        text = " ".join(fields[f][0] for f in wanted if fields[f][0])
        if not text:
            raise FormatError(path, block.line_at(fields[wanted[0]][1]),
                              f"topic {query_id!r} has empty {tags}; expected query text")
        yield Query(query_id, text)


def _topic_fields(body: str) -> dict[str, tuple[str, int]]:
    """Each field of a topic as (content without its label, offset of its tag); the first of a name wins.

    A field ends at its closing tag or, in the classic unclosed form, at the next tag.
    """
    fields: dict[str, tuple[str, int]] = {}
    name, tag_at, content_at = None, 0, 0

    def close(end: int) -> None:
        if name is not None and name not in fields:
            content = body[content_at:end].strip()
            label = _TOPIC_LABELS.get(name)
            if label:
                content = re.sub(rf"^{label}\s*:\s*", "", content, flags=re.I)
            fields[name] = (content, tag_at)

    for match in _TOPIC_TAG.finditer(body):
        close(match.start())
        tag = match.group(2).lower()
        name = None if match.group(1) else _TOPIC_ALIASES.get(tag, tag)
        tag_at, content_at = match.start(), match.end()
    close(len(body))
    return fields


def _rows(path, width: int, columns: str) -> Iterator[tuple[int, list[str]]]:
    for lineno, line in numbered_lines(path, f"reading {Path(path).name}"):
        row = line.split()
        if not row:
            continue
        if len(row) != width:
            raise FormatError(path, lineno, f"expected {width} whitespace-separated columns {columns!r}, "
                                            f"found {len(row)}: {line.strip()!r}")
        yield lineno, row
