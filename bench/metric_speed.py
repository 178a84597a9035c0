"""eval-trec end to end against pytrec_eval and ranx: one run of 10,000 queries x 1,000 results.

A fixed-seed run (scores with 4 decimals, so some ties) and graded qrels (20 judged documents a
query, grades 0-3, 15 of them retrieved, mostly near the top, and at least one relevant) are
written as TREC files to a temp directory. Each tool then reads both files and computes nDCG@10,
AP, RR@10, R@100 and P@10 per query, timed end to end (reading the files included):

- assay: evaluate_trec (what `assay eval-trec` runs: its compiled reader where built, else DuckDB's).
- pytrec_eval: its own parse_qrel/parse_run, then one RelevanceEvaluator; trec_eval has no
  RR@k, so RR@10 is recip_rank over the run cut to its top 10 (ordered as trec_eval orders),
  as ir_measures computes it.
- ranx: Qrels.from_file, Run.from_file and evaluate (its first call includes numba's compilation,
  which every fresh process pays).

It prints each wall time, the ratios assay/pytrec_eval and assay/ranx against the targets
(issue: <= 0.25x and <= 0.1x) and the largest per-query difference between each pair of tools.
ranx is a benchmark-only dependency: pip install -r bench/requirements.txt.
Run: .venv/bin/python bench/metric_speed.py [N_QUERIES [DEPTH]]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = ("nDCG@10", "AP", "RR@10", "R@100", "P@10")
PYTREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "R@100": "recall_100", "P@10": "P_10"}
RANX = {"nDCG@10": "ndcg@10", "AP": "map", "RR@10": "mrr@10", "R@100": "recall@100", "P@10": "precision@10"}
JUDGED, RETRIEVED_JUDGED, SEED = 20, 15, 20240611


def write_collection(directory: Path, n_queries: int, depth: int) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(SEED)
    query = np.repeat(np.arange(n_queries), depth)
    position = np.tile(np.arange(depth), n_queries)
    base = rng.integers(0, 1_000_000, n_queries)
    doc = (base[query] + position * 997) % 1_000_000  # distinct within a query
    score = np.round(20.0 - 10.0 * position / depth + rng.normal(0.0, 0.3, query.size), 4)
    order = np.lexsort((-score, query))  # each query's lines by score, as a system writes them
    query, doc, score = query[order], doc[order], score[order]

    def ids(prefix: str, numbers: np.ndarray, width: int):
        text = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), width, "0")
        return pc.binary_join_element_wise(prefix, text, "")

    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path = directory / "run.trec"
    pacsv.write_csv(pa.table({"qid": ids("q", query, 5), "q0": pa.array(np.full(query.size, "Q0")),
                              "docno": ids("doc", doc, 7), "rank": pa.array(position + 1),
                              "score": pa.array(score), "tag": pa.array(np.full(query.size, "bench"))}),
                    run_path, options)

    weights = 1.0 / (np.arange(depth) + 20.0)
    weights /= weights.sum()
    q_col, d_col, g_col = [], [], []
    for q in range(n_queries):
        picked = rng.choice(depth, RETRIEVED_JUDGED, replace=False, p=weights)
        judged = list(doc.reshape(n_queries, depth)[q, picked])
        judged += [1_000_000 + q * JUDGED + j for j in range(JUDGED - RETRIEVED_JUDGED)]  # never retrieved
        grades = rng.integers(0, 4, JUDGED)
        grades[0] = max(grades[0], 1)
        q_col += [q] * JUDGED
        d_col += judged
        g_col += list(grades)
    qrels_path = directory / "qrels.txt"
    pacsv.write_csv(pa.table({"qid": ids("q", np.array(q_col), 5), "iter": pa.array(np.zeros(len(q_col), int)),
                              "docno": ids("doc", np.array(d_col), 7), "rel": pa.array(np.array(g_col))}),
                    qrels_path, options)
    return qrels_path, run_path


def run_assay(qrels_path: Path, run_path: Path) -> dict[str, dict[str, float]]:
    from assay.measures.trec_eval import evaluate_trec

    rows = evaluate_trec(qrels_path, run_path, list(MEASURES), per_query=True)
    out: dict[str, dict[str, float]] = {m: {} for m in MEASURES}
    for row in rows:
        if row["query_id"] != "all":
            out[row["metric"]][row["query_id"]] = row["value"]
    return out


def run_pytrec_eval(qrels_path: Path, run_path: Path) -> dict[str, dict[str, float]]:
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    keys = {"ndcg_cut.10", "map", "recall.100", "P.10"}
    result = pytrec_eval.RelevanceEvaluator(qrels, keys).evaluate(run)
    top10 = {q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)[:10])
             for q, docs in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    out = {m: {q: v[key] for q, v in result.items()} for m, key in PYTREC.items()}
    out["RR@10"] = {q: v["recip_rank"] for q, v in rr.items()}
    return out


def run_ranx(qrels_path: Path, run_path: Path) -> dict[str, dict[str, float]]:
    import warnings

    from ranx import Qrels, Run, evaluate

    warnings.filterwarnings("ignore", message="unsafe cast")  # numba, inside ranx's nDCG
    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    run = Run.from_file(str(run_path), kind="trec")
    evaluate(qrels, run, list(RANX.values()))
    return {m: dict(run.scores[key]) for m, key in RANX.items()}


def worst(a: dict, b: dict) -> float:
    return max(abs(a[m][q] - b[m].get(q, float("nan"))) for m in MEASURES for q in a[m])


def timed(fn, *args):
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def main() -> None:
    n_queries = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_collection(Path(tmp), n_queries, depth)
        size = run_path.stat().st_size / 1e6
        ours, t_assay = timed(run_assay, qrels_path, run_path)
        trec, t_trec = timed(run_pytrec_eval, qrels_path, run_path)
        try:
            ranx_values, t_ranx = timed(run_ranx, qrels_path, run_path)
        except ImportError:
            ranx_values, t_ranx = None, None

    print(f"{n_queries} queries x {depth} results ({size:.0f} MB run file), {JUDGED} judged a query; "
          f"{', '.join(MEASURES)} per query, end to end")
    print(f"assay eval-trec   {t_assay:8.2f} s")
    print(f"pytrec_eval       {t_trec:8.2f} s   assay / pytrec_eval {t_assay / t_trec:5.2f}x  "
          f"target <= 0.25x: {'ok' if t_assay <= 0.25 * t_trec else 'MISSED'}")
    if ranx_values is None:
        print("ranx              not installed (pip install -r bench/requirements.txt)")
    else:
        print(f"ranx              {t_ranx:8.2f} s   assay / ranx        {t_assay / t_ranx:5.2f}x  "
              f"target <= 0.1x: {'ok' if t_assay <= 0.1 * t_ranx else 'MISSED'}")
    print(f"max |difference| per query: assay vs pytrec_eval {worst(ours, trec):.2e}", end="")
    if ranx_values is not None:
        print(f", assay vs ranx {worst(ours, ranx_values):.2e}, pytrec_eval vs ranx {worst(trec, ranx_values):.2e}")
    else:
        print()


if __name__ == "__main__":
    main()
