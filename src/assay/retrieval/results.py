"""What a retriever outside assay answers, and how it is checked.

Every external retriever answers a question with a JSON list of results, best first. A result is
either a document id string or an object::

    {"doc_id": "guide.md", "score": 3.2, "start": 120, "end": 480}   # start/end optional
    {"chunk_id": "guide.md#120-480", "score": 3.2}                   # score optional

A span is characters [start, end) of the assay document text; no span means the
whole document, i.e. chunk ``<doc_id>#0-<length>``. The external system's order
is its ranking and is kept as given: assay does not re-sort, so how equal scores
are ordered is the external system's business (``TIE_BREAK`` does not apply).

Programs and services may also answer ``{"results": [...]}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from assay.core.errors import RetrieverError
from assay.retrieval import Hit

EXCERPT_CHARS = 200


def _excerpt(text: str, n: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _score(value, where: str):
    if value is None:
        return None
    try:  # an integer too large for a float (JSON allows 1 followed by 400 zeros) is no score either
        finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    except OverflowError:
        finite = False
    if not finite:
        raise RetrieverError(f"{where}: score must be a finite number, got {_excerpt(repr(value), 60)}")
    return float(value)


def _parse_chunk_id(chunk_id: str) -> tuple[str, int, int] | None:
    doc_id, sep, span = chunk_id.rpartition("#")
    start, dash, end = span.partition("-")
    if not sep or not dash or not start.isdigit() or not end.isdigit():
        return None
    return doc_id, int(start), int(end)


def _span_chunk_id(doc_id: str, start, end, docs: Mapping[str, int], where: str) -> str:
    length = docs[doc_id]
    if not (_is_int(start) and _is_int(end) and 0 <= start < end <= length):
        raise RetrieverError(
            f"{where}: bad span [{_excerpt(repr(start), 40)}, {_excerpt(repr(end), 40)}) for {doc_id!r}: "
            f"need integers 0 <= start < end <= {length}"
        )
    return f"{doc_id}#{start}-{end}"


def _known(doc_id, docs: Mapping[str, int], where: str) -> str:
    if not isinstance(doc_id, str) or doc_id not in docs:
        raise RetrieverError(
            f"{where}: unknown document id {_excerpt(repr(doc_id), 80)}; "
            "results must name documents of the assay corpus"
        )
    return doc_id


def _one(item, docs: Mapping[str, int], where: str) -> tuple[str, str, float | None]:
    """(chunk_id, doc_id, score or None) of one result."""
    if isinstance(item, tuple) and len(item) == 2:  # (id, score), from Python callers
        chunk_id, doc_id, _ = _one(item[0], docs, where)
        return chunk_id, doc_id, _score(item[1], where)
    if isinstance(item, str):
        if item in docs:
            return f"{item}#0-{docs[item]}", item, None
        parsed = _parse_chunk_id(item)  # a bare chunk id is accepted too
        doc_id = _known(parsed[0] if parsed else item, docs, where)
        return _span_chunk_id(doc_id, parsed[1], parsed[2], docs, where), doc_id, None
    if not isinstance(item, dict):
        raise RetrieverError(f"{where}: a result must be a document id or an object, got {_excerpt(repr(item))}")
    score = _score(item.get("score"), where)
    has_span = "start" in item or "end" in item
    if "chunk_id" in item:
        if "doc_id" in item or has_span:
            raise RetrieverError(f"{where}: give either chunk_id or doc_id (with optional start/end), not both")
        chunk_id = item["chunk_id"]
        parsed = _parse_chunk_id(chunk_id) if isinstance(chunk_id, str) else None
        if parsed is None:
            raise RetrieverError(f"{where}: chunk_id {chunk_id!r} is not of the form '<doc_id>#<start>-<end>'")
        doc_id = _known(parsed[0], docs, where)
        return _span_chunk_id(doc_id, parsed[1], parsed[2], docs, where), doc_id, score
    if "doc_id" not in item:
        raise RetrieverError(f"{where}: a result object needs doc_id or chunk_id, got {_excerpt(repr(item))}")
    doc_id = _known(item["doc_id"], docs, where)
    if not has_span:
        return f"{doc_id}#0-{docs[doc_id]}", doc_id, score
    return _span_chunk_id(doc_id, item.get("start"), item.get("end"), docs, where), doc_id, score


def parse_results(raw, docs: Mapping[str, int], where: str) -> list[Hit]:
    """Validate one question's results and turn them into hits, in the order given.

    ``docs`` maps each document id to the length of its text. Besides the JSON
    forms in the module docstring, a Python caller may give ``(id, score)`` pairs,
    where the id is a document id or a chunk id. A result without a
    score scores ``-rank`` (1-based rank in the returned list), so scores fall with
    position. A chunk returned twice is kept at its first position only. Any
    problem raises ``RetrieverError`` whose message starts with ``where``.
    """
    if not isinstance(raw, list):
        raise RetrieverError(f"{where}: expected a list of results, got {type(raw).__name__}")
    hits: list[Hit] = []
    seen: set[str] = set()
    for i, item in enumerate(raw, start=1):
        chunk_id, doc_id, score = _one(item, docs, f"{where}, result {i}")
        if chunk_id in seen:
            continue
        seen.add(chunk_id)
        hits.append(Hit(chunk_id, doc_id, score if score is not None else -float(len(hits) + 1)))
    return hits


def _unwrap(payload, where: str):
    if isinstance(payload, dict):
        if "results" not in payload:
            raise RetrieverError(f"{where}: expected a list of results or {{\"results\": [...]}}, "
                                 f"got an object with keys {sorted(map(str, payload))[:10]}")
        return payload["results"]
    return payload


def _question(query: str, query_id) -> str:
    question = f"question {_excerpt(query, 80)!r}"
    return question if query_id is None else f"query {query_id}, {question}"
