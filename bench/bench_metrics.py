"""Metric computation: assay's SQL over the warehouse against pytrec_eval, side by side in one process.

A synthetic run of N questions x 100 chunks is written to a real DuckDB file; both
compute nDCG@10, AP, RR@10, P@5 and R@10 per question; the values are compared and
the times printed with their ratio. Run: .venv/bin/python bench/bench_metrics.py [N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "measures")]

import pytrec_eval  # noqa: E402

from assay.measures.compute import per_query  # noqa: E402
from assay.measures.registry import parse_measure  # noqa: E402
from assay.store.warehouse import Warehouse  # noqa: E402
from synthetic import QuerySpec, Synthetic, write_synthetic  # noqa: E402
from test_pytrec_parity import chunk_level_inputs  # noqa: E402  (the independent credit rule)

MEASURES = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@5": "P_5", "R@10": "recall_10"}


def synthetic(n: int, rng: random.Random) -> Synthetic:
    from assay.inputs.chunking import Chunk

    docs = [f"d{i}.md" for i in range(200)]
    chunks = [Chunk(d, j, j * 200, j * 200 + 250, "x" * 250) for d in docs for j in range(4)]
    syn = Synthetic(docs, chunks)
    for q in range(n):
        gold = []
        for _ in range(rng.choice([1, 2])):  # spans inside one chunk's private part: one unit per chunk
            d, j = rng.choice(docs), rng.randrange(4)
            gold.append((d, j * 200 + 60, j * 200 + 120, rng.randint(1, 2)))
        syn.queries.append(QuerySpec(f"q{q:05d}", gold, [c.chunk_id for c in rng.sample(chunks, 100)]))
    return syn


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    syn = synthetic(n, random.Random(7))
    with tempfile.TemporaryDirectory() as tmp, Warehouse.open(Path(tmp) / "w.duckdb") as wh:
        write_synthetic(wh, syn)
        t0 = time.perf_counter()
        ours = {m: per_query(wh, "synthetic-run", parse_measure(m)) for m in MEASURES}
        t_sql = time.perf_counter() - t0

        t0 = time.perf_counter()
        qrels, runs = {}, {}
        for q in syn.queries:
            qrel, run, _ = chunk_level_inputs(syn, q)
            qrels[q.query_id], runs[q.query_id] = qrel, run
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "P.5", "recall.10"})
        theirs = ev.evaluate(runs)
        t_trec = time.perf_counter() - t0

    worst = max(abs(ours[m][(q, "chunk")] - theirs[q][key]) for m, key in MEASURES.items() for q in theirs)
    print(f"{n} questions x 100 chunks, {len(MEASURES)} measures, chunk level")
    print(f"assay SQL (both levels)   {t_sql * 1000:8.1f} ms")
    print(f"pytrec_eval (chunk level) {t_trec * 1000:8.1f} ms  (incl. building its inputs)")
    print(f"ratio assay / pytrec_eval {t_sql / t_trec:8.2f}x   max |difference| {worst:.2e}")


if __name__ == "__main__":
    main()
