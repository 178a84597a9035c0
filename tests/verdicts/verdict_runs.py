"""Runs with prescribed per-question outcomes, written into a real warehouse, for the verdict boundary tests.

Every question has one relevant document (d0.md, judged whole); a run lists, for each question, one chunk
at rank 1: a chunk of d0.md (a hit: Success@1 = 1 at chunk and document level) or of d1.md (a miss: 0). So
a run's Success@1 is exactly ``hits / n`` and a paired comparison's McNemar counts are set by hand.
``write_ranks`` puts the relevant chunk at any rank up to 10 instead, for graded values (RR@10 = 1 / rank).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from assay.inputs.chunking import Chunk
from assay.runs.sinks import store_run
from synthetic import QuerySpec, Synthetic, write_synthetic

HIT, MISS = Chunk("d0.md", 0, 0, 100, "x" * 100), Chunk("d1.md", 0, 0, 100, "x" * 100)
OTHERS = [MISS] + [Chunk("d1.md", j, 100 * j, 100 * j + 100, "x" * 100) for j in range(1, 10)]  # d1.md, in order
T0 = datetime(2026, 1, 1)


class _Held:
    """Stands in for a warehouse to take the record write_synthetic builds, so its run id and start can be set."""

    def hold(self, record):
        self.record = record


def write_outcomes(wh, run_id: str, outcomes: list[int], minutes: int = 0, categories: list[str] | None = None):
    """A complete run whose question i (q000, q001, ...) is a hit when ``outcomes[i]`` is 1, started
    ``minutes`` after T0; question i in ``categories[i]`` when given (else "normal")."""
    return write_ranks(wh, run_id, [1 if hit else 0 for hit in outcomes], minutes, categories)


def write_ranks(wh, run_id: str, ranks: list[int], minutes: int = 0, categories: list[str] | None = None):
    """A complete run whose question i finds its relevant chunk at rank ``ranks[i]`` (1-10) after chunks of the
    other document, or not at all (0: a single miss), started ``minutes`` after T0."""
    syn = Synthetic(["d0.md", "d1.md"], [HIT, *OTHERS])
    for i, rank in enumerate(ranks):
        ranking = [c.chunk_id for c in OTHERS[:rank - 1]] + [HIT.chunk_id] if rank else [MISS.chunk_id]
        syn.queries.append(QuerySpec(f"q{i:03d}", [("d0.md", None, None, 1)], ranking,
                                     categories[i] if categories else "normal"))
    held = _Held()
    write_synthetic(held, syn, run_id=run_id)
    started = T0 + timedelta(minutes=minutes)
    record = dataclasses.replace(held.record, started_at=started, finished_at=started)
    store_run(wh, record)
    return record


def outcomes(n: int, hits: int, first_miss: int = 0) -> list[int]:
    """n outcomes with ``hits`` ones: questions [first_miss, first_miss + n - hits) miss."""
    misses = range(first_miss, first_miss + n - hits)
    return [0 if i in misses else 1 for i in range(n)]
