"""Retrievers: each takes chunks, builds its index, and answers questions with ranked hits."""

from __future__ import annotations

from typing import NamedTuple


class Hit(NamedTuple):
    """One ranked chunk. A named tuple, not a frozen dataclass: a run builds a hundred per question and stage,
    and a tuple is built in about half the time."""

    chunk_id: str
    doc_id: str
    score: float


TIE_BREAK = "score desc, chunk_id asc"


def rank_hits(hits: list[Hit]) -> list[Hit]:
    """The one ordering every stage uses: higher score first, equal scores by chunk id ascending."""
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))
