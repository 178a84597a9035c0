"""The tables the measure SQL reads for a TREC run, built from the qrels and the ranking as Arrow tables.

``sql/trec/measure_views.sql`` stores them under the names and columns of the warehouse's views
(``eval_questions``, ``unit_counts``, ``ideal_gains``, ``judged_ranking``), for one pseudo-run, so
the measures are the unchanged ``sql/measures/*.sql`` files. A query is named by its code: its
place among the qrels' query ids in byte order (``trec_query_codes`` maps codes to ids).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa  # pyarrow.compute is imported where used: 0.06 s the C reader's path need not pay

from assay.measures.trec_ranking import Relevant, Rows, arrow, codes, numeric, take

_GRADE_BITS = 32


def query_ids(qrels: Rows) -> pa.Array:
    """The qrels' query ids, each once, in byte order: the code of a query is its place here."""
    import pyarrow.compute as pc

    unique = pc.unique(qrels.query_id)
    return unique.take(pc.sort_indices(unique))


def query_codes(ids: pa.ChunkedArray, names: pa.Array) -> np.ndarray:
    """The code of each id, -1 for an id that is not a qrels query. A file lists a query's lines
    together, so only the first id of each stretch of equal ids is looked up (at 100 lines a query,
    a fifth of the time of looking up every one); any order gives the same codes, only slower."""
    import pyarrow.compute as pc

    firsts, lengths = [], []
    for chunk in ids.chunks:
        if len(chunk):
            changes = pc.indices_nonzero(pc.not_equal(chunk.slice(1), chunk.slice(0, len(chunk) - 1)))
            first = np.r_[0, numeric(changes, np.uint64).astype(np.int64) + 1]
            firsts.append(chunk.take(arrow(first)))
            lengths.append(np.diff(np.r_[first, len(chunk)]))
    if not firsts:
        return np.empty(0, np.int32)
    code = codes(pc.index_in(pa.chunked_array(firsts, type=ids.type), value_set=names))
    return np.repeat(code, np.concatenate(lengths))


def relevant(qrels: Rows, query: np.ndarray) -> Relevant:
    """The relevant judgments (relevance >= 1), ordered by hash; ``query``: the code of each qrels line."""
    rows = np.flatnonzero(qrels.value >= 1)
    rows = rows[np.argsort(qrels.h[rows])]
    return Relevant(rows, qrels.h[rows], query[rows], take(qrels.docno, rows))


def tables(names: pa.Array, query: np.ndarray, grade: np.ndarray, docno: pa.Array, found: np.ndarray,
           rank: np.ndarray, questions: np.ndarray) -> dict[str, pa.Table]:
    """The Arrow tables measure_views.sql reads: ``_assay_names`` (qcode, query_id), ``_assay_questions``
    (query_id: the codes scored), ``_assay_units`` (query_id, n_units), ``_assay_ideal`` (query_id,
    gain, ideal_rank) and ``_assay_judged`` (query_id, rank, item, gain). ``query``, ``grade`` and
    ``docno``: the relevant judgments (any order); ``found``: those the run retrieves (indices into
    them), at ``rank``."""
    grade = grade.astype(np.int64)
    units = np.bincount(query, minlength=len(names))
    judged = np.flatnonzero(units)
    # The ideal ranking: each query's relevant grades, highest first (one sort of query << 32 | ~grade).
    key = query.astype(np.uint64) << np.uint64(_GRADE_BITS)
    key |= ((1 << _GRADE_BITS) - 1 - grade).astype(np.uint64)  # grades are int32, >= 1
    key.sort()
    ideal_query = (key >> np.uint64(_GRADE_BITS)).astype(np.int32)
    ideal_gain = ((1 << _GRADE_BITS) - 1 - (key & np.uint64((1 << _GRADE_BITS) - 1)).astype(np.int64)).astype(np.int32)
    starts = np.r_[True, ideal_query[1:] != ideal_query[:-1]] if key.size else np.empty(0, bool)
    position = np.arange(key.size)
    ideal_rank = position - np.maximum.accumulate(np.where(starts, position, 0)) + 1
    return {
        "_assay_names": _table(qcode=arrow(np.arange(len(names), dtype=np.int32)), query_id=names),
        "_assay_questions": _table(query_id=arrow(questions.astype(np.int32))),
        "_assay_units": _table(query_id=arrow(judged.astype(np.int32)), n_units=arrow(units[judged])),
        "_assay_ideal": _table(query_id=arrow(ideal_query), gain=arrow(ideal_gain), ideal_rank=arrow(ideal_rank)),
        "_assay_judged": _table(query_id=arrow(query[found].astype(np.int32)), rank=arrow(rank),
                                item=docno.take(arrow(found)), gain=arrow(grade[found].astype(np.int32))),
    }


def from_read(read: dict, complete: bool) -> tuple[pa.Array, dict[str, pa.Table]]:
    """The query ids (``names``) and the tables of ``tables()`` from what _trec_read.c's ``read`` gives,
    the columns of each table already computed there: the ideal ranking (each query's relevant grades,
    highest first), the units, the relevant documents the run retrieves at their ranks, and the run's
    lines of each query."""
    n_relevant, n_units, n_found = read["sizes"]
    # Arrow strings from their buffers: pa.array of a list imports pandas (0.4 s) to ask if it is one
    names = strings(read, "query_id", len(read["query_ids"]))

    def column(name: str, dtype, n: int) -> pa.Array:
        return pa.Array.from_buffers(pa.from_numpy_dtype(np.dtype(dtype)), n, [None, pa.py_buffer(read[name])])

    items = strings(read, "judged_item", n_found)
    lines = np.frombuffer(read["lines"], np.int64, len(names))
    # trec_eval scores the qrels' queries the run answers; with -c (complete) every one
    questions = np.arange(len(names)) if complete else np.flatnonzero(lines)
    return names, {
        "_assay_names": _table(qcode=arrow(np.arange(len(names), dtype=np.int32)), query_id=names),
        "_assay_questions": _table(query_id=arrow(questions.astype(np.int32))),
        "_assay_units": _table(query_id=column("unit_query", np.int32, n_units),
                               n_units=column("n_units", np.int64, n_units)),
        "_assay_ideal": _table(query_id=column("ideal_query", np.int32, n_relevant),
                               gain=column("ideal_gain", np.int32, n_relevant),
                               ideal_rank=column("ideal_rank", np.int64, n_relevant)),
        "_assay_judged": _table(query_id=column("judged_query", np.int32, n_found),
                                rank=column("judged_rank", np.int64, n_found), item=items,
                                gain=column("judged_gain", np.int32, n_found)),
    }


def strings(read: dict, name: str, n: int) -> pa.Array:
    """The Arrow strings (large_string) whose offsets and bytes _trec_read.c gives as name_offsets, name_data."""
    return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(read[f"{name}_offsets"]),
                                                         pa.py_buffer(read[f"{name}_data"])])


def _table(**columns) -> pa.Table:
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))
