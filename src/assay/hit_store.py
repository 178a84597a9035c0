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

from assay.errors import WarehouseError

Row = tuple  # (rank, chunk_id, doc_id, score)


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
    stored: dict[tuple, tuple[int, list]] = {}  # (query_id, stage) -> (list_key, rows) of the list it reads
    list_rows, keys, ranks, chunk_ids, doc_ids, scores = [], [], [], [], [], []
    for (query_id, stage), rows in sorted(lists.items(), key=lambda item: (item[0][0], position.get(item[0][1], len(position)),
                                                                            item[0][1])):
        before = position.get(stage, 0) - 1
        source = stored.get((query_id, stages[before])) if before >= 0 and stage in position else None
        if source is not None and is_prefix(rows, source[1]):
            list_key = source[0]
        else:
            list_key, next_key = next_key, next_key + 1
            keys += [list_key] * len(rows)
            for rank, chunk_id, doc_id, score in rows:
                ranks.append(rank)
                chunk_ids.append(chunk_id)
                doc_ids.append(doc_id)
                scores.append(score)
            source = (list_key, rows)
        stored[(query_id, stage)] = source
        list_rows.append((query_id, stage, list_key, rows[-1][0]))
    columns = {"list_key": keys, "rank": ranks, "chunk_id": chunk_ids, "doc_id": doc_ids, "score": scores}
    with registered(con, "_assay_hit_rows", columns):
        con.execute(_sql("hits/new_chunk_keys"), {"chunk_set": chunk_set})
        con.execute(_sql("hits/insert_rows"), {"chunk_set": chunk_set})
    warehouse._insert("hit_lists", ["run_id", "query_id", "stage", "list_key", "through_rank"],
                      [(run_id, *row) for row in list_rows])


def copy_lists(warehouse, source: str, run_id: str, keep: bool) -> None:
    """A derived run's lists: its source's, read where the source's are (nothing copied but the list rows);
    ``keep``: only the questions of the registered ``_assay_keep``."""
    only = " AND query_id IN (SELECT query_id FROM _assay_keep)" if keep else ""
    warehouse.con.execute("INSERT INTO hit_lists (run_id, query_id, stage, list_key, through_rank) "
                          "SELECT ?, query_id, stage, list_key, through_rank FROM hit_lists "
                          f"WHERE run_id = ?{only} ORDER BY list_key, through_rank", [run_id, source])


def group_lists(run_id: str, hits: Iterable[tuple]) -> dict[tuple, list[Row]]:
    """{(query_id, stage): rows by rank}; a rank given twice in one list is refused."""
    lists: dict[tuple, list[Row]] = {}
    for query_id, stage, rank, chunk_id, doc_id, score in hits:
        lists.setdefault((query_id, stage), []).append((rank, chunk_id, doc_id, score))
    for (query_id, stage), rows in lists.items():
        rows.sort(key=lambda row: row[0])
        for a, b in zip(rows, rows[1:]):
            if a[0] == b[0]:
                raise WarehouseError(f"run {run_id}: duplicate hit at rank {a[0]} of stage {stage} for question "
                                     f"{query_id}; a list holds each rank once")
    return lists


def is_prefix(rows: list[Row], source: list[Row]) -> bool:
    """Whether ``rows`` are the first rows of ``source``, ranks 1..n in both, scores bit for bit."""
    if len(rows) > len(source) or rows[-1][0] != len(rows) or source[len(rows) - 1][0] != len(rows):
        return False
    if rows[0][0] != 1:
        return False
    for (rank, chunk_id, doc_id, score), (r, c, d, s) in zip(rows, source):
        if rank != r or chunk_id != c or doc_id != d or not same_score(score, s):
            return False
    return True


def same_score(a, b) -> bool:
    """Equal bit for bit as stored: -0.0 is not 0.0, NaN is NaN, None is None."""
    if a is None or b is None:
        return a is b
    if a != a or b != b:
        return a != a and b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _sql(name: str) -> str:
    from assay.sqlfiles import load_sql

    return load_sql(name)
