"""A question's ranked chunks as two columns, made into ``Hit`` objects only where one is read.

A search over 5,000 chunks answers 300 questions with 30,000 hits; a ``Hit`` each cost a BM25 pass a third of
its time, and the run stores them column by column anyway (``assay.store.hits``). A ``Ranking`` keeps what the
index returned: each hit's position in the index's ``ChunkTable`` (chunk ids and document ids, one entry per
chunk, shared by every question) and its score, best first. It is a sequence of ``Hit``: indexing, iterating and
comparing with a list of hits behave as that list would, so stages, notebooks and custom code that read hits
need not know; a slice is a ``Ranking`` again (the final stage's cut).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from assay.retrieval import Hit

_hit = tuple.__new__  # Hit(...) without the call through its generated __new__
_new_hit = partial(tuple.__new__, Hit)  # the same, for map: no Python frame per hit


class ChunkTable:
    """The chunks an index ranks, by position: ``chunk_ids[i]``, ``doc_ids[i]``."""

    __slots__ = ("chunk_ids", "doc_ids")

    def __init__(self, chunk_ids: list[str], doc_ids: list[str]):
        self.chunk_ids, self.doc_ids = chunk_ids, doc_ids

    def __len__(self) -> int:
        return len(self.chunk_ids)


class Ranking(Sequence):
    """Ranked hits as ``positions`` (into ``table``) and ``scores``, best first: lists of the same length."""

    __slots__ = ("table", "positions", "scores")

    def __init__(self, table: ChunkTable, positions: list[int], scores: list[float]):
        self.table, self.positions, self.scores = table, positions, scores

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Ranking(self.table, self.positions[i], self.scores[i])
        p = self.positions[i]
        return _hit(Hit, (self.table.chunk_ids[p], self.table.doc_ids[p], self.scores[i]))

    def __iter__(self):
        at, table = self.positions, self.table
        return map(_new_hit, zip(map(table.chunk_ids.__getitem__, at), map(table.doc_ids.__getitem__, at), self.scores))

    def __eq__(self, other) -> bool:
        if isinstance(other, Ranking) and other.table is self.table:
            return other.positions == self.positions and other.scores == self.scores
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # a sequence that compares by content, like the list it stands for

    def __repr__(self) -> str:
        return f"Ranking({list(self)!r})"

    def doc_ids(self) -> list[str]:
        """Each hit's document id, in rank order (no ``Hit`` made)."""
        return list(map(self.table.doc_ids.__getitem__, self.positions))


def doc_ids(hits: Sequence) -> list[str]:
    """The document ids of a list of hits, a ``Ranking`` read column-wise."""
    return hits.doc_ids() if isinstance(hits, Ranking) else [h.doc_id for h in hits]
