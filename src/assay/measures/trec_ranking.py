"""trec_eval's ranking of a run held in arrays: duplicates, the relevant documents it retrieves, their ranks.

A run of ten million lines is read by DuckDB into Arrow columns (``h``, the 64-bit hash of
(query, document), ``score``, ``query_id``, ``docno``); what trec_eval needs from it is computed
here with sorts of 64-bit keys (numpy sorts those with SIMD instructions, ~0.1 s for ten million)
and binary searches with sorted needles, instead of sorting and joining strings:

- Duplicates: the keys ``(h >> b) << b | row`` sorted; equal neighbours in their high bits are the
  only possible duplicates, checked on ``h`` and then on the strings.
- Relevant documents retrieved: each relevant judgment's ``h`` looked up in the same sorted keys,
  then checked on ``h`` and on the strings.
- Ranks: trec_eval ranks by score descending, ties by document id descending (byte order). Each
  row of a judged query gets the key ``query << (64 - B) | u >> B``, ``u`` the score's bits mapped
  to an unsigned integer of the same order (``-0.0`` read as ``0.0``), ``B`` the bits of the
  number of queries. With the keys sorted, a relevant row's rank is 1 + the rows of its query with
  a greater key; rows with the same key (a tie, or scores equal in their high bits) are ordered
  exactly, by score and then document id, among themselves.

Nothing here imports pandas: Arrow columns become numpy arrays through their buffers (pyarrow's
own ``to_numpy`` imports pandas, 0.4 s).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pyarrow as pa  # pyarrow.compute is imported where used: 0.06 s the C reader's path need not pay

_U64 = np.uint64
# Rows handled at a time by the element-wise passes (2 MB of uint64: temporaries stay in the L2 cache).
_BLOCK = 1 << 18
_SIGN = _U64(1 << 63)


@dataclass
class Rows:
    """The lines of a run or qrels file as columns: ``h`` (uint64, the 64-bit hash of (query_id,
    docno) as DuckDB's ``hash`` gives it), Arrow strings ``query_id`` and ``docno``, and ``value``:
    a run's scores (float64), a qrels file's relevance (int32)."""

    h: np.ndarray
    query_id: pa.ChunkedArray
    docno: pa.ChunkedArray
    value: np.ndarray
    _sorted: "SortedHashes | None" = None

    @classmethod
    def from_arrow(cls, table: pa.Table, value: str, dtype) -> "Rows":
        """From an Arrow table with the columns h, query_id, docno and `value`."""
        return cls(numeric(table.column("h"), np.uint64), table.column("query_id"), table.column("docno"),
                   numeric(table.column(value), dtype))

    def sorted_hashes(self) -> "SortedHashes":
        """The hashes sorted (once: the duplicate check and the search for relevant documents share them)."""
        if self._sorted is None:
            self._sorted = SortedHashes.of(self.h)
        return self._sorted


@dataclass
class Relevant:
    """The relevant judgments (relevance >= 1) in the order of their hashes: their lines in the qrels
    (``rows``), ``h``, query codes (``query``) and document ids (``docno``)."""

    rows: np.ndarray
    h: np.ndarray
    query: np.ndarray
    docno: pa.Array


# -- Arrow <-> numpy without pandas --------------------------------------------------------------
def numeric(column: pa.ChunkedArray | pa.Array, dtype) -> np.ndarray:
    """A numeric Arrow column without nulls as one numpy array (a copy)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    dtype = np.dtype(dtype)
    parts = []
    for chunk in chunks:
        if chunk.null_count:
            raise ValueError("a numeric column holds nulls")
        parts.append(np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk),
                                   offset=chunk.offset * dtype.itemsize))
    return np.concatenate(parts) if parts else np.empty(0, dtype)


def codes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """An Int32 Arrow column (pc.index_in's answer) as int32, -1 where null."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = []
    for chunk in chunks:
        values = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk),
                               offset=chunk.offset * 4).copy()
        if chunk.null_count:
            bits = np.unpackbits(np.frombuffer(chunk.buffers()[0], dtype=np.uint8), bitorder="little",
                                 count=chunk.offset + len(chunk))[chunk.offset:]
            values[bits == 0] = -1
        parts.append(values)
    return np.concatenate(parts) if parts else np.empty(0, np.int32)


def arrow(values: np.ndarray) -> pa.Array:
    """A numpy array as an Arrow array, sharing its memory."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def take(column: pa.ChunkedArray, indices: np.ndarray) -> pa.Array:
    """``column.take(indices)``. Indices in order are taken chunk by chunk: pyarrow's own take on a
    chunked column first joins the chunks into one array (a copy of the whole column, 140 MB for ten
    million document ids). Indices in any other order are taken from that joined array: a random
    take chunk by chunk costs several times more."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.size > 1 and (indices[1:] < indices[:-1]).any():
        return column.combine_chunks().take(arrow(indices))
    starts = np.cumsum([0] + [len(chunk) for chunk in column.chunks])
    cuts = np.searchsorted(indices, starts)
    parts = [chunk.take(arrow(indices[cuts[i]:cuts[i + 1]] - starts[i]))
             for i, chunk in enumerate(column.chunks) if cuts[i + 1] > cuts[i]]
    return pa.chunked_array(parts, type=column.type).combine_chunks()


@contextmanager
def small_pages():
    """numpy asks the kernel for transparent huge pages for large arrays; where the kernel then
    compacts memory to find them (``defrag`` ``madvise``, a common default), a fresh 80 MB array
    costs several times what zeroing it does. Off while ranking, restored after."""
    switch = getattr(getattr(getattr(np, "_core", None), "multiarray", None), "_set_madvise_hugepage", None)
    if switch is None:
        yield
        return
    before = switch(False)
    try:
        yield
    finally:
        switch(before)


def _all_true(mask: pa.ChunkedArray | pa.Array) -> np.ndarray | None:
    """None when every value is true, else the mask as a numpy bool array."""
    import pyarrow.compute as pc

    if pc.all(mask).as_py() and not mask.null_count:
        return None
    return np.array([bool(x) for x in mask.to_pylist()], dtype=bool)


# -- sorted hashes ---------------------------------------------------------------------------------
@dataclass
class SortedHashes:
    """The run's hashes sorted on their high bits, with the row each came from."""

    top: np.ndarray  # h >> bits, sorted
    rows: np.ndarray  # the row of each (uint64)
    bits: int

    @classmethod
    def of(cls, h: np.ndarray) -> "SortedHashes":
        bits = max(1, int(h.size).bit_length())
        key = np.empty_like(h)
        for start in range(0, h.size, _BLOCK):  # block by block: the temporaries stay in the CPU cache
            block = key[start:start + _BLOCK]
            np.right_shift(h[start:start + _BLOCK], _U64(bits), out=block)
            block <<= _U64(bits)
            block |= np.arange(start, start + block.size, dtype=np.uint64)
        key.sort()
        rows = key & _U64((1 << bits) - 1)
        key >>= _U64(bits)
        return cls(key, rows, bits)

    def find(self, needles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into needles, row) of every row whose hash's high bits equal a needle's. The needles
        come sorted: a search then starts where the last one ended, in memory still cached (random
        needles into 80 MB miss the cache at every step)."""
        top = self.top
        if not top.size or not needles.size:
            return np.empty(0, np.int64), np.empty(0, np.uint64)
        lo = np.searchsorted(top, needles, "left")
        hit = top[np.minimum(lo, top.size - 1)] == needles
        after = np.minimum(lo + 1, top.size - 1)
        if not (hit & (lo + 1 < top.size) & (top[after] == needles)).any():  # one row at most a needle
            which = np.flatnonzero(hit)
            return which, self.rows[lo[which]]
        # Several rows share a needle's high bits (a duplicate, or about one pair in 10^12)
        counts = np.searchsorted(top, needles, "right") - lo
        which = np.repeat(np.arange(needles.size), counts)
        offsets = np.arange(which.size) - np.repeat(np.cumsum(counts) - counts, counts)
        return which, self.rows[np.repeat(lo, counts) + offsets]


def duplicate(run: Rows) -> tuple[str, str] | None:
    """The first (query_id, docno) pair listed twice, in string order; None when there is none."""
    hashes = run.sorted_hashes()
    top = hashes.top
    if top.size < 2:
        return None
    same = np.flatnonzero(top[1:] == top[:-1])
    if not same.size:
        return None
    candidates = np.unique(np.concatenate([hashes.rows[same], hashes.rows[same + 1]]))
    h = run.h[candidates]
    values, counts = np.unique(h, return_counts=True)
    candidates = candidates[np.isin(h, values[counts > 1])]
    if not candidates.size:
        return None
    pairs = zip(take(run.query_id, candidates).to_pylist(), take(run.docno, candidates).to_pylist())
    seen, twice = set(), []
    for pair in pairs:
        if pair in seen:
            twice.append(pair)
        seen.add(pair)
    if not twice:
        return None
    return min(twice, key=lambda pair: (pair[0].encode(), pair[1].encode()))


def retrieved_relevant(run: Rows, query: np.ndarray, relevant: Relevant) -> tuple[np.ndarray, np.ndarray]:
    """(run rows, relevant judgments) of every relevant document the run retrieves, in row order.
    ``query``: each row's query code (as ``relevant.query``)."""
    import pyarrow.compute as pc

    hashes = run.sorted_hashes()
    judgment, rows = hashes.find(relevant.h >> _U64(hashes.bits))  # relevant.h is sorted
    keep = (run.h[rows] == relevant.h[judgment]) & (query[rows] == relevant.query[judgment])
    rows, judgment = rows[keep].astype(np.int64), judgment[keep]
    order = np.argsort(rows)  # Arrow takes from a chunked column faster in order
    rows, judgment = rows[order], judgment[order]
    same = _all_true(pc.equal(take(run.docno, rows), relevant.docno.take(arrow(judgment))))
    if same is not None:  # a 64-bit collision of two different pairs
        rows, judgment = rows[same], judgment[same]
    return rows, judgment


# -- ranks -----------------------------------------------------------------------------------------
def order_keys(query: np.ndarray, score: np.ndarray, shift: int) -> np.ndarray:
    """``query << (64 - shift) | u >> shift``, ``u`` unsigned integers in the order of the scores
    (-0.0 as 0.0)."""
    out = np.empty(score.size, dtype=np.uint64)
    for start in range(0, score.size, _BLOCK):  # block by block: the temporaries stay in the CPU cache
        bits = out[start:start + _BLOCK]
        np.add(score[start:start + _BLOCK], 0.0, out=bits.view(np.float64))  # -0.0 + 0.0 is 0.0
        flip = bits >> _U64(63)
        flip *= _U64((1 << 63) - 1)
        flip |= _SIGN
        bits ^= flip  # negative: every bit flipped; positive: the sign bit set
        bits >>= _U64(shift)
        np.copyto(flip, query[start:start + _BLOCK], casting="unsafe")
        flip <<= _U64(64 - shift)
        bits |= flip
    return out


def ranks(query: np.ndarray, score: np.ndarray, docno: pa.ChunkedArray, rows: np.ndarray,
          n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """The rank of each of ``rows`` in its query's ranking, as trec_eval ranks (score descending, ties by
    docno descending, byte order), and the number of lines of each query. ``query``: each run line's
    query code, 0 .. n_queries - 1, or -1 for a query outside the qrels (never ranked)."""
    if not rows.size:
        return np.empty(0, np.int64), np.bincount(query[query >= 0], minlength=n_queries)
    shift = max(1, int(n_queries).bit_length())

    def keys(which) -> np.ndarray:
        return order_keys(query[which], score[which], shift)

    ordered = keys(np.flatnonzero(query >= 0)) if (query < 0).any() else order_keys(query, score, shift)
    ordered.sort()
    mine = keys(rows)
    bounds = np.searchsorted(ordered, np.arange(n_queries + 1, dtype=np.uint64) << _U64(64 - shift))
    order = np.argsort(mine)  # sorted needles, as in SortedHashes.find
    right = np.empty_like(order)
    right[order] = np.searchsorted(ordered, mine[order], "right")
    rank = bounds[query[rows] + 1] - right + 1
    # right - 1 is the last line with the same key; is there another before it?
    tied = np.flatnonzero((right >= 2) & (ordered[np.maximum(right - 2, 0)] == mine))
    if tied.size:
        rank[tied] += _ahead_among_equal_keys(query, score, docno, rows[tied], mine[tied], keys, n_queries)
    return rank, np.diff(bounds)


def _ahead_among_equal_keys(query, score, docno, rows, mine, keys, n_queries) -> np.ndarray:
    """For rows whose key other rows share, how many of those rank ahead of each (score, then docno)."""
    import pyarrow.compute as pc

    asked = np.zeros(n_queries + 1, dtype=bool)  # the last entry stays False: query -1 lands there
    asked[query[rows]] = True
    candidates = np.flatnonzero(asked[query])
    wanted = np.unique(mine)
    candidate_keys = keys(candidates)
    at = np.minimum(np.searchsorted(wanted, candidate_keys), wanted.size - 1)
    members = candidates[wanted[at] == candidate_keys]  # ascending rows; holds every one of `rows`
    member_keys = keys(members)
    table = pa.Table.from_arrays([arrow(member_keys), arrow(score[members] + 0.0), take(docno, members)],
                                 names=["key", "score", "docno"])
    order = numeric(pc.sort_indices(table, sort_keys=[("key", "ascending"), ("score", "descending"),
                                                      ("docno", "descending")]), np.uint64).astype(np.int64)
    sorted_keys = member_keys[order]
    starts = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(order.size), 0))
    ahead = np.empty(order.size, dtype=np.int64)
    ahead[order] = np.arange(order.size) - group_start
    return ahead[np.searchsorted(members, rows)]
