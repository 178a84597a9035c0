"""How a run's hits are stored (migration 013): a few bytes a hit, nothing lost, a list equal to its input once.

The ``hits`` view reads three tables:

- ``chunk_keys``: every chunk a hit can name, under an integer key. A chunk set's chunks get consecutive keys
  when the chunk set is stored; a hit naming a chunk its chunk set lacks gets one when its run is written.
- ``hit_rows``: the rows of each stored list: its ``list_key``, the rank, the chunk's key and the score, bit for bit.
- ``hit_lists``: one row per (run, question, stage) list: the stored list it reads and its last rank.

A list equal to the first rows of its input's list (the stage before it in the run's stages: ``final`` after
``bm25``, cut or whole) is not stored again: its ``hit_lists`` row points at the input's rows. A derived run
(rescore, revalidation) points at its source's lists. DuckDB compresses what is left (bit-packed integers,
ALP for the scores); ``bench/warehouse_size.py`` measures the bytes.

Nothing indexes (run_id, query_id, stage, rank): ``write_hits`` refuses a run whose hits repeat one.

A run hands its lists over as its stages made them (``RunHits``): a BM25 list is a ``Ranking``, each hit a
position in its index's chunk table and a score, and is written from those columns; the chunk table goes to
DuckDB once (``_assay_hit_chunks``) and each stored row names its chunk by position in it. No hit becomes a
Python object on the way. Rows given one by one (older callers, tests) are grouped into the same columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain, groupby, repeat
from operator import itemgetter, lt
from typing import TYPE_CHECKING

from assay.core.errors import WarehouseError

if TYPE_CHECKING:
    from assay.retrieval.ranking import ChunkTable

List = tuple  # a list's columns, by rank: (ranks, chunks, scores) for writing; group_lists' also name the chunk


def write_chunk_keys(warehouse, chunk_set: str, chunks: Sequence) -> None:
    """Keys for a chunk set's chunks, consecutive, in the order given. Inside the caller's transaction."""
    from assay.store.rows import registered

    if not chunks:
        return
    columns = {"ordinal": list(range(len(chunks))), "chunk_id": [c.chunk_id for c in chunks],
               "doc_id": [c.doc_id for c in chunks]}
    with registered(warehouse.con, "_assay_chunk_keys", columns):
        warehouse.con.execute(_sql("hits/chunk_keys"), {"chunk_set": chunk_set})


class RunHits(Sequence):
    """A run's hit lists as its stages made them: ``(query_id, stage, hits)``, ``hits`` a ``Ranking`` (columns) or a
    sequence of ``Hit``. It reads as the ``(query_id, stage, rank, chunk_id, doc_id, score)`` rows it stands for,
    made when read; ``write_hits`` stores the lists column by column without making them. Changing it
    (``append``, ``extend``) turns it into those rows, which ``write_hits`` then groups as any rows."""

    def __init__(self, lists=()):
        self._lists, self._rows = list(lists), None
        self._read: list | None = None  # the rows, once made for indexing

    def add(self, query_id: str, stage: str, hits) -> None:
        if self._rows is not None:
            self._rows.extend((query_id, stage, rank, h.chunk_id, h.doc_id, h.score) for rank, h in enumerate(hits, 1))
        else:
            self._lists.append((query_id, stage, hits))
            self._read = None

    def lists(self) -> list | None:
        """The lists as added, or None once the rows were changed."""
        return self._lists if self._rows is None else None

    def _materialized(self) -> list:
        if self._rows is None:
            self._rows = list(iter(self))
            self._lists, self._read = [], None
        return self._rows

    def __iter__(self):
        if self._rows is not None:
            return iter(self._rows)
        return ((query_id, stage, rank, h.chunk_id, h.doc_id, h.score)
                for query_id, stage, hits in self._lists for rank, h in enumerate(hits, 1))

    def __len__(self) -> int:
        return len(self._rows) if self._rows is not None else sum(len(hits) for _, _, hits in self._lists)

    def __getitem__(self, i):
        if self._rows is not None:
            return self._rows[i]
        if self._read is None:
            self._read = list(self)
        return self._read[i]

    def __add__(self, other) -> list:
        return list(self) + list(other)

    def __radd__(self, other) -> list:
        return list(other) + list(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, (RunHits, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def append(self, row: tuple) -> None:
        self._materialized().append(row)

    def extend(self, rows) -> None:
        self._materialized().extend(rows)


def write_hits(warehouse, run_id: str, chunk_set: str, hits: Iterable[tuple], stages: Sequence[str]) -> None:
    """Store a run's hits inside the caller's transaction: a ``RunHits``, or ``(query_id, stage, rank, chunk_id,
    doc_id, score)`` rows. ``stages`` is the run's stage order: a stage's input is the one before it."""
    from assay.store.rows import registered

    lists, table = hit_columns(run_id, hits)
    if not lists:
        return
    con = warehouse.con
    next_key = con.execute("SELECT COALESCE(MAX(list_key), 0) + 1 FROM hit_lists").fetchall()[0][0]
    position = {stage: i for i, stage in enumerate(stages)}

    def in_order(item):  # question by question, each stage after its input (stages not in the order last)
        (query_id, stage), _ = item
        return query_id, position.get(stage, len(position)), stage

    read: dict[tuple, tuple[int, List]] = {}  # (query_id, stage) -> (list_key, columns) of the rows it reads
    list_rows, stored = [], []  # stored: (list_key, columns) of each list whose rows are written
    for (query_id, stage), own in sorted(lists.items(), key=in_order):
        before = position[stage] - 1 if stage in position else -1
        source = read.get((query_id, stages[before])) if before >= 0 else None
        if source is None or not is_prefix(own, source[1]):
            source, next_key = (next_key, own), next_key + 1
            stored.append(source)
        read[(query_id, stage)] = source
        list_rows.append((query_id, stage, source[0], own[0][-1]))
    rows = {"list_key": list(chain.from_iterable(repeat(key, len(own[0])) for key, own in stored)),
            **{name: list(chain.from_iterable(own[i] for _, own in stored))
               for i, name in enumerate(("rank", "chunk", "score"))}}
    chunks = {"chunk": range(len(table.chunk_ids)), "chunk_id": table.chunk_ids, "doc_id": table.doc_ids}
    with registered(con, "_assay_hit_rows", rows), registered(con, "_assay_hit_chunks", chunks):
        con.execute(_sql("hits/new_chunk_keys"), {"chunk_set": chunk_set})
        con.execute(_sql("hits/insert_rows"), {"chunk_set": chunk_set})
    warehouse._insert("hit_lists", ["run_id", "query_id", "stage", "list_key", "through_rank"],
                      [(run_id, *row) for row in list_rows])


def hit_columns(run_id: str, hits) -> tuple[dict[tuple, List], ChunkTable]:
    """``({(query_id, stage): (ranks, chunks, scores)}, table)``: each non-empty list's columns by rank, a chunk
    named by its position in ``table``. A ``Ranking`` of an index gives its positions as they are (the first
    index's table is the run's); other hits are looked up, and chunks no index has are added to the table."""
    from assay.retrieval.ranking import ChunkTable, Ranking

    given = hits.lists() if isinstance(hits, RunHits) else None
    if given is None:  # rows: grouped by list, then each chunk looked up
        given = [(query_id, stage, tuple(zip(chunk_ids, doc_ids, scores)), ranks)
                 for (query_id, stage), (ranks, chunk_ids, doc_ids, scores) in group_lists(run_id, hits).items()]
    base = next((h.table for _, _, h, *_ in given if isinstance(h, Ranking)), None)
    table = ChunkTable(list(base.chunk_ids), list(base.doc_ids)) if base is not None else ChunkTable([], [])
    known: dict | None = None  # (chunk_id, doc_id) -> position, made when first needed

    def position(chunk_id: str, doc_id: str) -> int:
        nonlocal known
        if known is None:
            known = {key: i for i, key in enumerate(zip(table.chunk_ids, table.doc_ids))}
        p = known.get((chunk_id, doc_id))
        if p is None:
            p = known[(chunk_id, doc_id)] = len(table.chunk_ids)
            table.chunk_ids.append(chunk_id)
            table.doc_ids.append(doc_id)
        return p

    lists: dict[tuple, List] = {}
    for query_id, stage, hits_of, *ranked in given:
        if not len(hits_of):
            continue
        if isinstance(hits_of, Ranking) and hits_of.table is base:
            chunks, scores = hits_of.positions, list(hits_of.scores)
        else:
            chunks = [position(h[0], h[1]) for h in hits_of]
            scores = [h[2] for h in hits_of]
        ranks = list(ranked[0]) if ranked else list(range(1, len(chunks) + 1))
        if (query_id, stage) in lists:  # the same list given twice: its ranks repeat
            raise WarehouseError(f"run {run_id}: duplicate hit at rank {ranks[0]} of stage {stage} for question "
                                 f"{query_id}; a list holds each rank once")
        lists[(query_id, stage)] = (ranks, chunks, scores)
    return lists, table


def group_lists(run_id: str, hits: Iterable[tuple]) -> dict[tuple, List]:
    """{(query_id, stage): (ranks, chunk ids, document ids, scores) by rank}; a rank given twice in a list is
    refused."""
    raw: dict[tuple, list] = {}
    for key, group in groupby(hits, key=itemgetter(0, 1)):  # a run's hits come list by list: one group each
        raw.setdefault(key, []).extend(group)
    lists = {}
    for (query_id, stage), rows in raw.items():
        ranks = [row[2] for row in rows]
        if not all(map(lt, ranks, ranks[1:])):
            rows.sort(key=itemgetter(2))
            ranks = [row[2] for row in rows]
            repeated = next((a for a, b in zip(ranks, ranks[1:]) if a == b), None)
            if repeated is not None:
                raise WarehouseError(f"run {run_id}: duplicate hit at rank {repeated} of stage {stage} for question "
                                     f"{query_id}; a list holds each rank once")
        lists[(query_id, stage)] = tuple(zip(*rows))[2:]
    return lists


def is_prefix(own: List, source: List) -> bool:
    """Whether ``own`` is the first rows of ``source``, ranks 1..n in both, scores (the last column) bit for bit."""
    ranks, n = own[0], len(own[0])
    if n > len(source[0]) or ranks[0] != 1 or ranks[-1] != n or any(a != b[:n] for a, b in zip(own, source)):
        return False
    # == takes -0.0 for 0.0; a NaN equals only the same float object, whose bits are the same
    return 0.0 not in own[-1] or all(math.copysign(1.0, a) == math.copysign(1.0, b)
                                     for a, b in zip(own[-1], source[-1]) if a == 0.0)


def _sql(name: str) -> str:
    from assay.core.sqlfiles import load_sql

    return load_sql(name)
