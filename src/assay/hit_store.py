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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import groupby
from operator import itemgetter, lt

from assay.errors import WarehouseError

List = tuple  # a list's columns, by rank: (ranks, chunk ids, document ids, scores)


def write_chunk_keys(warehouse, chunk_set: str, chunks: Sequence) -> None:
    """Keys for a chunk set's chunks, consecutive, in the order given. Inside the caller's transaction."""
    from assay.rows import registered

    if not chunks:
        return
    columns = {"ordinal": list(range(len(chunks))), "chunk_id": [c.chunk_id for c in chunks],
               "doc_id": [c.doc_id for c in chunks]}
    with registered(warehouse.con, "_assay_chunk_keys", columns):
        warehouse.con.execute(_sql("hits/chunk_keys"), {"chunk_set": chunk_set})


def write_hits(warehouse, run_id: str, chunk_set: str, hits: Iterable[tuple], stages: Sequence[str]) -> None:
    """Store a run's hits, ``(query_id, stage, rank, chunk_id, doc_id, score)`` rows, inside the caller's
    transaction. ``stages`` is the run's stage order: a stage's input is the one before it."""
    from assay.rows import registered

    lists = group_lists(run_id, hits)
    if not lists:
        return
    con = warehouse.con
    next_key = con.execute("SELECT COALESCE(MAX(list_key), 0) + 1 FROM hit_lists").fetchall()[0][0]
    position = {stage: i for i, stage in enumerate(stages)}

    def in_order(item):  # question by question, each stage after its input (stages not in the order last)
        (query_id, stage), _ = item
        return query_id, position.get(stage, len(position)), stage

    read: dict[tuple, tuple[int, List]] = {}  # (query_id, stage) -> (list_key, columns) of the rows it reads
    list_rows, keys, columns = [], [], ([], [], [], [])
    for (query_id, stage), own in sorted(lists.items(), key=in_order):
        before = position[stage] - 1 if stage in position else -1
        source = read.get((query_id, stages[before])) if before >= 0 else None
        if source is None or not is_prefix(own, source[1]):
            source, next_key = (next_key, own), next_key + 1
            keys += [source[0]] * len(own[0])
            for column, values in zip(columns, own):
                column.extend(values)
        read[(query_id, stage)] = source
        list_rows.append((query_id, stage, source[0], own[0][-1]))
    rows = dict(zip(("rank", "chunk_id", "doc_id", "score"), columns), list_key=keys)
    with registered(con, "_assay_hit_rows", rows):
        con.execute(_sql("hits/new_chunk_keys"), {"chunk_set": chunk_set})
        con.execute(_sql("hits/insert_rows"), {"chunk_set": chunk_set})
    warehouse._insert("hit_lists", ["run_id", "query_id", "stage", "list_key", "through_rank"],
                      [(run_id, *row) for row in list_rows])


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
    """Whether ``own`` is the first rows of ``source``, ranks 1..n in both, scores bit for bit."""
    ranks, n = own[0], len(own[0])
    if n > len(source[0]) or ranks[0] != 1 or ranks[-1] != n or any(a != b[:n] for a, b in zip(own, source)):
        return False
    # == takes -0.0 for 0.0; a NaN equals only the same float object, whose bits are the same
    return 0.0 not in own[3] or all(math.copysign(1.0, a) == math.copysign(1.0, b)
                                    for a, b in zip(own[3], source[3]) if a == 0.0)


def _sql(name: str) -> str:
    from assay.sqlfiles import load_sql

    return load_sql(name)
