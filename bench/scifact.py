"""SciFact (BEIR test split) at document level: assay's BM25 and the offline MiniLM against published figures.

Also measures embedding throughput, peak memory while embedding, and the second
(cached) dense run's wall time over the first. Prints one JSON object.

    .venv/bin/python bench/scifact.py [--skip-dense] [--out FILE]

The collection is read from ../shared/collections/scifact and written, once, to
a temporary corpus directory (one file per abstract: title, newline, text) plus a
whole-document judgments file. Embedding all 5,183 abstracts takes 10-20 minutes
on 2 cores: this is a benchmark, never a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact"
PUBLISHED = {
    "bm25_anserini_flat": {"nDCG@10": 0.6789, "R@100": 0.9253, "settings": "k1=0.9 b=0.4, Lucene English stopwords, Porter"},
    "bm25_bm25s": {"nDCG@10": 0.6874, "R@100": 0.9127, "settings": "k1=1.5 b=0.75, English stopwords, Snowball"},
    "all-MiniLM-L6-v2": {"nDCG@10": 0.6451, "R@100": 0.925, "settings": "cosine, no prefix (MTEB)"},
}


def write_collection(dest: Path) -> tuple[Path, Path]:
    corpus = dest / "corpus"
    corpus.mkdir()
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            (corpus / f"{d['_id']}.txt").write_text(f"{d['title']}\n{d['text']}\n", encoding="utf-8")
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    gold: dict[str, list[str]] = {}
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, doc, score = line.split()
            if int(score) > 0:
                gold.setdefault(qid, []).append(doc)
    judgments = dest / "judgments.jsonl"
    with open(judgments, "w", encoding="utf-8") as f:
        for qid in sorted(gold):
            f.write(json.dumps({"query_id": qid, "query": queries[qid], "category": "normal", "form": "match",
                                "gold": [{"doc": f"{d}.txt"} for d in sorted(set(gold[qid]))]}) + "\n")
    return corpus, judgments


def doc_metrics(wh, run_id: str) -> dict:
    from assay.measures.compute import per_query
    from assay.measures.registry import parse_measure

    out = {}
    for name in ("nDCG@10", "R@100", "RR@10", "AP@10", "R@10"):
        values = [v for (q, lvl), v in per_query(wh, run_id, parse_measure(name)).items() if lvl == "doc"]
        out[name] = round(sum(values) / len(values), 4)
    out["n"] = len(values)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    from assay.runs.runner import RunOptions, execute_run
    from assay.store.warehouse import Warehouse

    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-dense", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    figures: dict = {"collection": "scifact test (300 queries, 5,183 abstracts)", "level": "doc",
                     "chunker": "document (one chunk per abstract)", "published": PUBLISHED}
    from assay.runs.sinks import store_run  # rows and measure values, as a run stores them

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus, judgments = write_collection(tmp)
        with Warehouse.open(tmp / "w.duckdb") as wh:
            t0 = time.perf_counter()
            rec = execute_run(corpus, judgments, RunOptions("bm25", chunker="document", depth=100, doc_depth=100),
                              warehouse=wh)
            store_run(wh, rec)
            figures["bm25"] = {"settings": "tantivy k1=1.2 b=0.75, simple tokenizer, lowercase, Lucene English "
                                           "stopwords, Snowball English stemmer, title+text one field",
                               "wall_s": round(time.perf_counter() - t0, 2), **doc_metrics(wh, rec.run_id)}
            figures["bm25"]["delta_vs_anserini_flat"] = round(
                figures["bm25"]["nDCG@10"] - PUBLISHED["bm25_anserini_flat"]["nDCG@10"], 4)
            print(json.dumps({"bm25": figures["bm25"]}), file=sys.stderr, flush=True)
            if not args.skip_dense:
                rss_before = peak_rss_mb()
                opts = RunOptions("dense", chunker="document", depth=100, doc_depth=100, embedder="offline")
                t0 = time.perf_counter()
                rec = execute_run(corpus, judgments, opts, warehouse=wh)
                first = time.perf_counter() - t0
                store_run(wh, rec)
                computed = rec.stats["embeddings"]["computed"]
                figures["dense"] = {"model": "all-MiniLM-L6-v2 int8 (offline)", "wall_s": round(first, 1),
                                    **doc_metrics(wh, rec.run_id),
                                    "embedded_chunks": computed,
                                    "chunks_per_s": round(computed / first, 2),
                                    "peak_rss_mb": round(peak_rss_mb(), 1),
                                    "peak_rss_mb_before_embedding": round(rss_before, 1)}
                figures["dense"]["delta_vs_published"] = round(
                    figures["dense"]["nDCG@10"] - PUBLISHED["all-MiniLM-L6-v2"]["nDCG@10"], 4)
                t0 = time.perf_counter()
                rec2 = execute_run(corpus, judgments, opts, warehouse=wh)
                second = time.perf_counter() - t0
                figures["dense_cached_rerun"] = {"wall_s": round(second, 2), "ratio_to_first": round(second / first, 4),
                                                 "target": "<= 0.05", **rec2.stats["embeddings"]}
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
