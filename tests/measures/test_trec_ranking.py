"""assay.measures.trec_ranking and assay.measures.trec_tables against plain Python references: trec_eval's order (score
descending, ties by document id descending in byte order), hash collisions, and the query codes."""

import math
import random
import struct

import numpy as np
import pyarrow as pa
import pytest

from assay.measures.trec_ranking import Relevant, Rows, SortedHashes, duplicate, order_keys, ranks, retrieved_relevant, take
from assay.measures.trec_tables import query_codes

DOCS = ["d0", "d1", "d10", "d9", "D5", "a", "Z", "é1", "e1", "x-1", "d07", "d7"]


def chunked(values, pieces=3, rng=None) -> pa.ChunkedArray:
    """`values` as an Arrow string column cut into a few chunks (some empty), as DuckDB hands them over."""
    rng = rng or random.Random(0)
    cuts = sorted(rng.randint(0, len(values)) for _ in range(pieces - 1))
    bounds = [0, *cuts, len(values)]
    return pa.chunked_array([pa.array(values[a:b], pa.string()) for a, b in zip(bounds, bounds[1:])], pa.string())


def reference_ranks(query, score, docno, rows):
    """Each row's rank among the rows of its query, by (score, docno bytes) descending."""
    out = []
    key = [(score[i] + 0.0, docno[i].encode()) for i in range(len(query))]
    for r in rows:
        out.append(1 + sum(1 for i in range(len(query)) if query[i] == query[r] and key[i] > key[r]))
    return out


def near(x: float, steps: int) -> float:
    """x moved by `steps` units in the last place: equal to x in all but its lowest bits."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    moved = bits + steps if bits + steps >= 0 else bits - steps  # below 0.0's bits lies NaN, not -0.0
    return struct.unpack("<d", struct.pack("<q", moved))[0]


@pytest.mark.parametrize("seed", range(12))
def test_ranks_are_trec_eval_order(seed):
    rng = random.Random(seed)
    n_queries = rng.choice([1, 3, 40, 700, 5000])  # 5000: 13 bits of the key name the query
    query, score, docno = [], [], []
    for code in rng.sample(range(n_queries), rng.randint(1, min(n_queries, 60))):
        base = rng.choice([0.0, 1.0, -3.5, 1e300, 5e-324, 123456.789])
        for d in rng.sample(DOCS, rng.randint(1, len(DOCS))):
            query.append(code)
            score.append(rng.choice([base, -base, near(base, rng.randint(-3, 3)), -0.0, 0.0, math.inf, -math.inf,
                                     round(rng.uniform(-2, 2), 1)]))
            docno.append(d)
    for _ in range(rng.randint(0, 20)):  # lines of queries outside the qrels
        query.append(-1), score.append(rng.uniform(-5, 5)), docno.append(rng.choice(DOCS))
    order = list(range(len(query)))
    rng.shuffle(order)
    query, score, docno = [query[i] for i in order], [score[i] for i in order], [docno[i] for i in order]
    rows = np.array(sorted(rng.sample([i for i in range(len(query)) if query[i] >= 0],
                                      k=min(15, sum(q >= 0 for q in query)))), dtype=np.int64)
    got, lines = ranks(np.array(query, np.int32), np.array(score), chunked(docno, rng=rng), rows, n_queries)
    assert got.tolist() == reference_ranks(query, score, docno, rows)
    assert lines.tolist() == [query.count(q) for q in range(n_queries)]


def test_order_keys_keep_the_order_of_scores():
    scores = np.array([-math.inf, -1e300, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, near(1.0, 1), 1e300, math.inf])
    keys = order_keys(np.zeros(scores.size, np.int32), scores, 1)
    assert np.all(keys[1:] >= keys[:-1])
    assert keys[4] == keys[5]  # -0.0 and 0.0 are one score to trec_eval
    full = order_keys(np.zeros(scores.size, np.int32), scores, 1) << np.uint64(1)
    assert (np.diff(full.astype(object)) >= 0).all()


def rows_of(pairs, hashes, values=None) -> Rows:
    return Rows(np.array(hashes, dtype=np.uint64), chunked([q for q, _ in pairs]), chunked([d for _, d in pairs]),
                np.array(values if values is not None else [0.0] * len(pairs)))


def test_duplicate_tells_a_collision_from_a_pair_listed_twice():
    pairs = [("q1", "a"), ("q1", "b"), ("q2", "a"), ("q1", "c")]
    # q1/a and q2/a share a hash, q1/b and q1/c share their high bits: neither is a duplicate
    assert duplicate(rows_of(pairs, [7 << 40, 9 << 40 | 1, 7 << 40, 9 << 40 | 2])) is None
    pairs += [("q2", "a"), ("q1", "b")]
    assert duplicate(rows_of(pairs, [7 << 40, 9 << 40 | 1, 7 << 40, 9 << 40 | 2, 7 << 40, 9 << 40 | 1])) == ("q1", "b")


def test_relevant_documents_are_matched_on_the_strings_too():
    run_pairs = [("q1", "a"), ("q1", "b"), ("q2", "a"), ("q2", "c")]
    run = rows_of(run_pairs, [5, 6 << 40, 5, 6 << 40 | 3])  # q1/a and q2/a collide; q1/b, q2/c share high bits
    # relevant: q2/a (hash 5, code 1), q1/b (code 0), q2/c (code 1); ordered by hash
    relevant = Relevant(np.array([1, 0, 2]), np.array([5, 6 << 40, 6 << 40 | 3], np.uint64), np.array([1, 0, 1]),
                        pa.array(["a", "b", "c"]))
    rows, found = retrieved_relevant(run, np.array([0, 0, 1, 1], np.int32), relevant)
    assert sorted(zip(rows.tolist(), found.tolist())) == [(1, 1), (2, 0), (3, 2)]


def test_sorted_hashes_find_every_row_sharing_high_bits():
    h = np.array([3 << 40 | 1, 1 << 40, 3 << 40 | 2, 2 << 40], dtype=np.uint64)
    hashes = SortedHashes.of(h)
    which, rows = hashes.find(np.array([1 << 40 >> hashes.bits, 3 << 40 >> hashes.bits], dtype=np.uint64))
    assert sorted(zip(which.tolist(), rows.tolist())) == [(0, 1), (1, 0), (1, 2)]


@pytest.mark.parametrize("grouped", [True, False])
def test_query_codes_in_any_order(grouped):
    rng = random.Random(3)
    ids = [q for q in ["q3", "q1", "other", "q10", "q2"] for _ in range(rng.randint(1, 9))]
    if not grouped:
        rng.shuffle(ids)
    names = pa.array(["q1", "q10", "q2", "q3"])
    assert query_codes(chunked(ids, pieces=4, rng=rng), names).tolist() == [
        ["q1", "q10", "q2", "q3"].index(q) if q != "other" else -1 for q in ids]


def test_take_in_any_order_across_chunks():
    column = chunked([f"v{i}" for i in range(50)], pieces=6)
    indices = np.array([49, 0, 17, 17, 33, 1])
    assert take(column, indices).to_pylist() == [f"v{i}" for i in indices]
    assert take(column, np.array([], dtype=np.int64)).to_pylist() == []
