"""Span measures: assay's SQL against a plain Python character-set computation, side by side in one process.

A synthetic run of N questions x 100 results over 200 documents of words is written to a real
DuckDB file (token tables included, as every run has them). Both compute SpanRecall, SpanPrecision
and SpanIoU within a 1,000-token budget per question (the Python side is the independent reference
of tests/measures/test_span.py, given the token spans for free); the values are compared and the times
printed with their ratio. Run: .venv/bin/python bench/span_speed.py [N]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "measures")]

from assay.store.tokens import token_spans  # noqa: E402
from assay.inputs.chunking import Chunk  # noqa: E402
from assay.measures.compute import per_query  # noqa: E402
from assay.measures.registry import NO_CUTOFF, parse_measure  # noqa: E402
from assay.store.warehouse import Warehouse  # noqa: E402
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic  # noqa: E402
from test_span import WORDS, expected  # noqa: E402  (the independent reference)

FAMILIES = ("SpanRecall", "SpanPrecision", "SpanIoU")
BUDGET = 1000


def synthetic(n: int, rng: random.Random):
    docs = [f"d{i}.md" for i in range(200)]
    texts = {}
    for d in docs:
        out = ""
        while len(out) < DOC_LEN:
            out += rng.choice(WORDS) + " "
        texts[d] = out[:DOC_LEN]
    chunks = [Chunk(d, j, j * 200, min(DOC_LEN, j * 200 + 250), texts[d][j * 200:j * 200 + 250])
              for d in docs for j in range(5)]
    syn = Synthetic(docs, chunks)
    for q in range(n):
        gold = []
        for _ in range(rng.choice([1, 2])):
            d, s = rng.choice(docs), rng.randrange(0, DOC_LEN - 100)
            gold.append((d, s, s + rng.randint(20, 100), 1))
        syn.queries.append(QuerySpec(f"q{q:05d}", gold, [c.chunk_id for c in rng.sample(chunks, 100)]))
    return syn, texts


def main(n: int) -> None:
    syn, texts = synthetic(n, random.Random(0))
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse.open(Path(tmp) / "bench.duckdb")
        write_synthetic(wh, syn, texts=texts)
        t0 = time.perf_counter()
        sql = {f: per_query(wh, "synthetic-run", parse_measure(f"{f}@{BUDGET}tok")) for f in FAMILIES}
        t_sql = time.perf_counter() - t0
        wh.close()
    t0 = time.perf_counter()
    tokens = dict(zip(texts, token_spans(list(texts.values()))))
    t_tok = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = {q.query_id: expected(syn, tokens, q, NO_CUTOFF, BUDGET) for q in syn.queries}
    t_py = time.perf_counter() - t0
    diff = max(abs(sql[f][(q, "chunk")] - ref[q][f]) for f in FAMILIES for q in ref)
    print(f"{n} questions x 100 results, {BUDGET}-token budget, {', '.join(FAMILIES)}")
    print(f"  assay SQL       {t_sql * 1000:8.0f} ms")
    print(f"  Python sets     {t_py * 1000:8.0f} ms (plus {t_tok * 1000:.0f} ms tokenizing, not counted)")
    print(f"  ratio           {t_sql / t_py:8.2f}x   largest difference {diff:.1e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
