"""The citation contract: every claim in an answer must quote the context it was given.

An answer is a structured payload

    {"claims": [{"text": str, "citations": [{"chunk_id": str, "quote": str}, ...]}, ...],
     "insufficient_evidence": bool}

``parse_claims`` checks its shape; ``validate`` checks each claim against the context (chunk id
to chunk text). A claim is kept only if it has at least one citation and every citation is valid.
A citation is checked in this order, the first failure being its reason:

    unknown_citation  its chunk_id is not in the context
    bad_quote         its quote is empty after stripping, or longer than ``max_quote`` characters
                      (counted after stripping the ends)
    quote_mismatch    its quote does not occur in that chunk's text

Quotes match after whitespace normalization: runs of whitespace on either side count as one
space, so a quote copied across a line break still matches (the same rule as gold quotes in
judgments). Matching is otherwise exact: case and punctuation count. A valid citation carries the
[start, end) offsets of its first occurrence in the original chunk text. A claim with no citations
is dropped as ``uncited``; otherwise a dropped claim's reason is that of its first invalid citation.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.inputs.judgments.resolve import quote_pattern

REASONS = ("uncited", "unknown_citation", "quote_mismatch", "bad_quote")

MAX_QUOTE = 240


@dataclass(frozen=True)
class Citation:
    chunk_id: str
    quote: str


@dataclass(frozen=True)
class Claim:
    text: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class CheckedCitation:
    chunk_id: str
    quote: str
    valid: bool
    reason: str | None
    start: int | None  # offsets of the quote inside the chunk text; None when it was not found
    end: int | None


@dataclass(frozen=True)
class CheckedClaim:
    index: int
    text: str
    kept: bool
    reason: str | None
    citations: tuple[CheckedCitation, ...]


def _string_field(obj: dict, key: str, at: str, errors: list[str], non_empty: bool = False) -> str | None:
    if key not in obj:
        errors.append(f"{at}.{key}: missing")
        return None
    value = obj[key]
    if not isinstance(value, str):
        errors.append(f"{at}.{key}: must be a string, got {type(value).__name__}")
        return None
    if non_empty and not value.strip():
        errors.append(f"{at}.{key}: must not be empty")
        return None
    return value


def _parse_claim(raw, at: str, errors: list[str]) -> Claim | None:
    if not isinstance(raw, dict):
        errors.append(f"{at}: must be an object like {{\"text\": ..., \"citations\": [...]}}")
        return None
    before = len(errors)
    text = _string_field(raw, "text", at, errors, non_empty=True)
    # A claim with no "citations" key parses as uncited: that is the contract's failure, not the schema's.
    raw_citations = raw.get("citations", [])
    citations = []
    if not isinstance(raw_citations, list):
        errors.append(f"{at}.citations: must be a list, got {type(raw_citations).__name__}")
    else:
        for j, item in enumerate(raw_citations):
            cat = f"{at}.citations[{j}]"
            if not isinstance(item, dict):
                errors.append(f"{cat}: must be an object like {{\"chunk_id\": ..., \"quote\": ...}}")
                continue
            chunk_id = _string_field(item, "chunk_id", cat, errors)
            quote = _string_field(item, "quote", cat, errors)
            if chunk_id is not None and quote is not None:
                citations.append(Citation(chunk_id, quote))
    if len(errors) > before:
        return None
    return Claim(text, tuple(citations))


def parse_claims(payload) -> tuple[list[Claim], bool, list[str]]:
    """(claims, insufficient_evidence, schema_errors) from an answer payload.

    ``insufficient_evidence`` defaults to false; ``claims`` may be omitted only when it is true.
    Each schema error names where it is (``claims[1].citations[0].quote: missing``). When there
    is any schema error the claims come back empty: the caller records a schema failure.
    """
    if not isinstance(payload, dict):
        return [], False, [f"payload: must be an object with \"claims\", got {type(payload).__name__}"]
    errors: list[str] = []
    insufficient = payload.get("insufficient_evidence", False)
    if not isinstance(insufficient, bool):
        errors.append(f"insufficient_evidence: must be true or false, got {insufficient!r}")
        insufficient = False
    claims: list[Claim] = []
    if "claims" not in payload:
        if not insufficient:
            errors.append("claims: missing (omit it only with \"insufficient_evidence\": true)")
    elif not isinstance(payload["claims"], list):
        errors.append(f"claims: must be a list, got {type(payload['claims']).__name__}")
    else:
        for i, raw in enumerate(payload["claims"]):
            claim = _parse_claim(raw, f"claims[{i}]", errors)
            if claim is not None:
                claims.append(claim)
    if errors:
        return [], insufficient, errors
    return claims, insufficient, []


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """[start, end) of the quote's first occurrence in ``text`` under whitespace normalization."""
    match = quote_pattern(quote).search(text)
    return (match.start(), match.end()) if match else None


def check_citation(citation: Citation, context: dict[str, str], max_quote: int = MAX_QUOTE) -> CheckedCitation:
    def failed(reason: str) -> CheckedCitation:
        return CheckedCitation(citation.chunk_id, citation.quote, False, reason, None, None)

    if citation.chunk_id not in context:
        return failed("unknown_citation")
    stripped = citation.quote.strip()
    if not stripped or len(stripped) > max_quote:
        return failed("bad_quote")
    span = locate_quote(context[citation.chunk_id], stripped)
    if span is None:
        return failed("quote_mismatch")
    return CheckedCitation(citation.chunk_id, citation.quote, True, None, span[0], span[1])


def validate(claims, context: dict[str, str], max_quote: int = MAX_QUOTE) -> list[CheckedClaim]:
    """Check every claim against the context, in order; see the module docstring for the rules."""
    checked = []
    for index, claim in enumerate(claims):
        citations = tuple(check_citation(c, context, max_quote) for c in claim.citations)
        if not citations:
            reason = "uncited"
        else:
            reason = next((c.reason for c in citations if not c.valid), None)
        checked.append(CheckedClaim(index, claim.text, reason is None, reason, citations))
    return checked
