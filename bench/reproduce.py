"""Published baselines reproduced: `python bench/reproduce.py scifact|vaswani [--data DIR] [--dense]`.

Imports the collection from DIR/scifact or DIR/vaswani into a temporary warehouse
(`assay import beir|trec`), runs assay's BM25 at whole-document granularity, and
prints one JSON object: each metric's value, the published figure it is compared
with, the difference, and the settings used. Document-level metrics.

DIR is --data, else ../shared/collections beside this checkout when it exists (the
project's machines), else ~/data. A collection that is not there is one line on
stderr saying which file is missing and the command that downloads it (docs/collections.md,
"Getting the collections"), and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "collections"
# the files each collection is read from, and the command that downloads them into DIR
FILES = {"scifact": ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"),
         "vaswani": ("doc-text.trec", "query-text.trec", "qrels")}
BEIR_ZIP = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"
VASWANI_FILES = "https://raw.githubusercontent.com/terrier-org/pyterrier/master/tests/fixtures/vaswani_npl"
DOWNLOAD = {
    "scifact": f"curl -LO {BEIR_ZIP} && unzip scifact.zip -d {{data}}",
    "vaswani": (f"mkdir -p {{data}}/vaswani && cd {{data}}/vaswani && for f in corpus/doc-text.trec query-text.trec "
                f"qrels; do curl -LO {VASWANI_FILES}/$f; done"),
}
BM25_SETTINGS = ("tantivy BM25 k1=1.2 b=0.75 over title + blank line + text as one field; simple tokenizer, "
                 "lowercase, Lucene's 33 English stop words, Snowball English stemmer; document chunker")
PUBLISHED = {
    "scifact": {
        "bm25": {"source": "Anserini beir-v1.0.0-scifact.flat (k1=0.9 b=0.4, Porter, Lucene stopwords)",
                 "nDCG@10": 0.6789, "R@100": 0.9253, "R@1000": 0.9767},
        "bm25s": {"source": "MTEB baseline-bm25s (k1=1.5 b=0.75, Snowball)", "nDCG@10": 0.6874, "R@100": 0.9127,
                  "R@10": 0.8187},
        "dense": {"source": "MTEB all-MiniLM-L6-v2", "nDCG@10": 0.6451, "R@10": 0.7833, "R@100": 0.925},
    },
    "vaswani": {
        "bm25": {"source": "PyTerrier BM25 (k1=1.2 b=0.75, Terrier stopwords, Porter), 1,000 results",
                 "AP": 0.2965, "nDCG": 0.6212},
    },
}


def _means(wh, run_id: str, names) -> dict:
    from assay.measures.compute import per_query
    from assay.measures.registry import parse_measure

    out = {}
    for name in names:
        values = [v for (q, lvl), v in per_query(wh, run_id, parse_measure(name)).items() if lvl == "doc"]
        out[name] = round(sum(values) / len(values), 4)
    out["n"] = len(values)
    return out


def _compare(figures: dict, published: dict) -> dict:
    return {k: {"assay": v, "published": published[k], "delta": round(v - published[k], 4)}
            for k, v in figures.items() if k in published}


def default_data() -> Path:
    return SHARED if SHARED.is_dir() else Path.home() / "data"


def missing(name: str, data: Path) -> str | None:
    """None when ``data`` holds the collection, else the one line that says what is missing and how to get it."""
    where = data / name
    lacking = [f for f in FILES[name] if not (where / f).is_file()]
    if not lacking:
        return None
    what = f"{where} does not exist" if not where.is_dir() else f"{where} has no {', '.join(lacking)}"
    return (f"reproduce.py: {name} not found: {what}; download it with `{DOWNLOAD[name].format(data=data)}` "
            f"(docs/collections.md, \"Getting the collections\") or give --data DIR")


def reproduce(name: str, dense: bool = False, data: Path | None = None) -> dict:
    from assay.store.imports import import_beir, import_trec
    from assay.runs.runner import RunOptions, execute_run
    from assay.store.warehouse import Warehouse

    data = default_data() if data is None else data
    out = {"collection": name, "level": "doc"}
    with tempfile.TemporaryDirectory() as tmp, Warehouse.open(Path(tmp) / "w.duckdb") as wh:
        t0 = time.perf_counter()
        if name == "scifact":
            summary = import_beir(wh, data / "scifact", "test", "scifact")
            corpus, judgments, depth = "@scifact", "@scifact/test", 1000
            names = ("nDCG@10", "R@10", "R@100", "R@1000", "RR@10", "AP@10")
        else:
            v = data / "vaswani"
            summary = import_trec(wh, v / "doc-text.trec", v / "query-text.trec", v / "qrels", "vaswani")
            corpus, judgments, depth = "@vaswani", "@vaswani", 1000
            names = ("AP", "nDCG", "nDCG@10", "P@10", "R@1000")
        out["import_s"] = round(time.perf_counter() - t0, 2)
        out["documents"], out["questions"] = summary["documents"], summary["queries"]
        runs = [("bm25", RunOptions("bm25", chunker="document", depth=depth, doc_depth=depth), BM25_SETTINGS)]
        if dense and name == "scifact":
            runs.append(("dense", RunOptions("dense", chunker="document", depth=100, doc_depth=100,
                                             embedder="offline"), "all-MiniLM-L6-v2 int8 (offline), 256 word pieces, "
                                                                  "exact cosine"))
        for label, options, settings in runs:
            t0 = time.perf_counter()
            record = execute_run(corpus, judgments, options, warehouse=wh)
            from assay.runs.sinks import store_run  # rows and measure values, as a run stores them
            store_run(wh, record)
            figures = _means(wh, record.run_id, names)
            out[label] = {"settings": settings, "wall_s": round(time.perf_counter() - t0, 2), **figures,
                          "vs_published": {k: _compare(figures, p) | {"source": p["source"]}
                                           for k, p in PUBLISHED[name].items() if (k == label or
                                                                                  (label == "bm25" and k == "bm25s"))}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", choices=sorted(PUBLISHED))
    parser.add_argument("--data", type=Path, default=None,
                        help="directory holding scifact/ and vaswani/ (default: ../shared/collections when it exists, "
                             "else ~/data)")
    parser.add_argument("--dense", action="store_true", help="also the offline MiniLM (SciFact; 5-20 minutes)")
    args = parser.parse_args()
    data = (args.data or default_data()).expanduser()
    problem = missing(args.collection, data)
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(reproduce(args.collection, args.dense, data), indent=2))


if __name__ == "__main__":
    main()
