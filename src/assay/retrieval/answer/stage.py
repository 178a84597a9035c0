"""The answer stage for one question: refusal rules, the generator, the citation contract, the rows to store.

An answer refuses when retrieval returned nothing (``no_results``), when a stored
calibration said abstain (``calibration``), when the generator says
``insufficient_evidence``, when the reply breaks the schema (``schema``), when no
claim survives the citation contract (``no_valid_claim``), or when the endpoint
failed (``error``). Which one happened is recorded, with the stage it belongs to
(generation, schema, validation) for stage attribution. An endpoint that answered HTTP 2xx with
something that is not a chat completion (not JSON, no ``choices[0].message``) fails the question
(``failed``, ``error``) at the ``schema`` stage; a timeout, a refused connection, a redirect, an
oversized answer or an error status fails it at the ``generation`` stage.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field

from assay.retrieval.answer.contract import validate

EXCERPT = 200
ERROR_CHARS = 1000  # of an error stored with an answer or a verdict: its words, and at most an excerpt of a reply
CUT_MARK = "\n[assay: reply cut at {kept} of {total} characters (max_reply_chars)]"
_CUT = re.compile(r"\n\[assay: reply cut at \d+ of \d+ characters \(max_reply_chars\)\]\Z")


def kept_reply(text: str | None, limit: int) -> str | None:
    """What of a model's reply is stored: all of it up to ``limit`` characters, else its first ``limit``
    followed by ``CUT_MARK`` (so it is never mistaken for the whole reply); None when ``limit`` is 0."""
    if text is None or limit == 0:
        return None
    return text if len(text) <= limit else text[:limit] + CUT_MARK.format(kept=limit, total=len(text))


def is_cut(text: str | None) -> bool:
    """Whether a stored reply is only the start of one (``kept_reply`` cut it)."""
    return bool(text) and _CUT.search(text) is not None


def kept_error(text: str | None) -> str | None:
    return text if text is None or len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."


@dataclass
class AnswerRows:
    answer: tuple
    claims: list = field(default_factory=list)
    citations: list = field(default_factory=list)
    raws: list = field(default_factory=list)
    context: list = field(default_factory=list)


def _span_of(chunk_id: str, start: int | None, end: int | None):
    """The quote's document and offsets, from its chunk's span and its offsets inside the chunk."""
    doc, span = chunk_id.rsplit("#", 1)
    chunk_start = int(span.split("-")[0])
    if start is None:
        return doc, None, None
    return doc, chunk_start + start, chunk_start + end


def checked_rows(query_id: str, checked) -> tuple[list, list, int, str | None]:
    """Rows of the checked claims and their citations, claims kept, and drops by reason (JSON, or None)."""
    claims_rows, cite_rows = [], []
    for claim in checked:
        claims_rows.append((query_id, claim.index, claim.text, claim.kept, claim.reason))
        for j, c in enumerate(claim.citations):
            doc, start, end = _span_of(c.chunk_id, c.start, c.end) if c.valid else (None, None, None)
            cite_rows.append((query_id, claim.index, j, c.chunk_id, c.quote, c.valid, c.reason, doc, start, end))
    drops = Counter(c.reason for c in checked if not c.kept)
    return claims_rows, cite_rows, sum(c.kept for c in checked), json.dumps(dict(sorted(drops.items()))) if drops else None


def outcome(error, schema_errors, kept: int, insufficient: bool,
            error_stage: str = "generation") -> tuple[str, str | None, str | None]:
    """(status, refusal reason, failure stage) of an answer, in this order of precedence."""
    if error is not None:
        return "failed", "error", error_stage
    if schema_errors:
        return "refused", "schema", "schema"
    if kept:
        return "answered", None, None
    if insufficient:
        return "refused", "insufficient_evidence", "generation"
    return "refused", "no_valid_claim", "validation"


def answer_question(generator, query_id: str, question: str, hits, texts, context_k: int, max_quote: int,
                    refusal: str | None) -> AnswerRows:
    t0 = time.perf_counter()
    context = [(h.chunk_id, texts[h.chunk_id]) for h in hits[:context_k]]
    context_rows = [(query_id, i, cid) for i, (cid, _) in enumerate(context, 1)]
    if refusal is not None:  # nothing reaches the generator
        answer = (query_id, generator.name, None, "refused", refusal, None, 0, 0, None, 0, None, None, None, None,
                  None, (time.perf_counter() - t0) * 1000.0)
        return AnswerRows(answer, context=context_rows)
    gen = generator.generate(question, context)
    raws = [(query_id, i, mode, raw) for i, (mode, raw) in enumerate(gen.raws, 1)]
    excerpt = gen.raws[-1][1][:EXCERPT] if gen.raws else None
    checked = validate(gen.claims, dict(context), max_quote) if gen.claims else []
    claims_rows, cite_rows, kept, drops = checked_rows(query_id, checked)
    status, reason, stage = outcome(gen.error, gen.schema_errors, kept, gen.insufficient, gen.failure_stage)
    answer = (query_id, generator.name, gen.mode, status, reason, stage, len(checked), kept,
              drops, gen.repair_turns, gen.http_status,
              gen.finish_reason, json.dumps(gen.schema_errors) if gen.schema_errors else None, gen.error, excerpt,
              (time.perf_counter() - t0) * 1000.0)
    return AnswerRows(answer, claims_rows, cite_rows, raws, context_rows)


ANSWER_COLUMNS = ["query_id", "generator", "mode", "status", "refusal", "failure_stage", "claims_returned",
                  "claims_kept", "drops", "repair_turns", "http_status", "finish_reason", "parse_errors", "error",
                  "response_excerpt", "latency_ms"]
CLAIM_COLUMNS = ["query_id", "claim_idx", "text", "kept", "reason"]
CITATION_COLUMNS = ["query_id", "claim_idx", "cite_idx", "chunk_id", "quote", "valid", "reason", "doc_id",
                    "start_char", "end_char"]
RAW_COLUMNS = ["query_id", "attempt", "mode", "raw"]
CONTEXT_COLUMNS = ["query_id", "position", "chunk_id"]
