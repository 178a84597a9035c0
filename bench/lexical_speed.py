"""Lexical retrieval speed and quality: assay's tantivy BM25 against bm25s on SciFact, in one process.

Both index the same 5,183 abstracts (title + text) and answer the 300 test claims
with the top 100 documents; quality is nDCG@10 from assay's metric SQL over the
same warehouse, so only the retrievers differ. bm25s runs as its MTEB baseline
does: English stop words, Snowball English stemmer (PyStemmer), method "lucene",
k1=1.5, b=0.75. Needs `pip install -r bench/requirements.txt`.

    .venv/bin/python bench/lexical_speed.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact"


def main() -> None:
    import bm25s
    import Stemmer

    from assay.imports import import_beir
    from assay.retrieval.bm25 import BM25Index
    from assay.runner import RunOptions, execute_run
    from assay.stored import stored_corpus, stored_judgments
    from assay.chunking import make_chunker

    with tempfile.TemporaryDirectory() as tmp:
        from assay.warehouse import Warehouse

        wh = Warehouse.open(Path(tmp) / "w.duckdb")
        import_beir(wh, SCIFACT, "test", "scifact")
        corpus = stored_corpus(wh, "@scifact")
        questions = [j.query for j in stored_judgments(wh, "@scifact/test").judgments]
        chunks = [c for d in corpus.documents for c in make_chunker("document").chunk(d.doc_id, d.text)]

        t0 = time.perf_counter()
        index = BM25Index(chunks)
        assay_index = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in questions:
            index.search(q, 100)
        assay_query = time.perf_counter() - t0
        index.close()

        stemmer = Stemmer.Stemmer("english")
        texts = [c.text for c in chunks]
        t0 = time.perf_counter()
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        retriever.index(tokens, show_progress=False)
        bm25s_index = time.perf_counter() - t0
        t0 = time.perf_counter()
        qtokens = bm25s.tokenize(questions, stopwords="en", stemmer=stemmer, show_progress=False)
        results, scores = retriever.retrieve(qtokens, k=100, show_progress=False, n_threads=1)
        bm25s_query = time.perf_counter() - t0

        # quality, both through assay's metric SQL: assay's own run, and bm25s's ranking as a Python retriever
        rec = execute_run("@scifact", "@scifact/test", RunOptions("bm25", chunker="document", depth=100,
                                                                  doc_depth=100), warehouse=wh)
        wh.write_run(rec)
        ranked = {q: [(chunks[i].doc_id, float(s)) for i, s in zip(results[n], scores[n])]
                  for n, q in enumerate(questions)}
        rec2 = execute_run("@scifact", "@scifact/test", RunOptions("python", chunker="document", depth=100,
                                                                   python_retriever=lambda q, k: ranked[q][:k]),
                           warehouse=wh)
        wh.write_run(rec2)
        from assay.metrics.compute import per_query
        from assay.metrics.registry import parse_measure

        def ndcg(run_id):
            v = [x for (q, lvl), x in per_query(wh, run_id, parse_measure("nDCG@10")).items() if lvl == "doc"]
            return round(sum(v) / len(v), 4)

        out = {
            "collection": "scifact test: 5,183 documents, 300 questions, top 100",
            "assay_tantivy": {"index_s": round(assay_index, 3), "queries_s": round(assay_query, 3),
                              "nDCG@10": ndcg(rec.run_id)},
            "bm25s": {"index_s": round(bm25s_index, 3), "queries_s": round(bm25s_query, 3),
                      "nDCG@10": ndcg(rec2.run_id), "version": bm25s.__version__},
        }
        out["ratio_index"] = round(assay_index / bm25s_index, 2)
        out["ratio_queries"] = round(assay_query / bm25s_query, 2)
        wh.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
