"""eval-trec against pytrec_eval: CPU and wall time at 10,000 queries x 1,000 results and 100,000 x 100.

Files: a seeded run (scores with 4 decimals, so ties, which trec_eval breaks by document id
descending) and graded qrels (20 judged documents a query, grades 0-3, 15 of them retrieved,
mostly near the top, at least one relevant), written once as TREC files under --dir (default
/tmp/assay-eval-trec-bench) and reused while the seed and sizes stay the same.

What is timed: each tool in a fresh Python process of its own, started by this script one after
the other (the order alternating between repeats):

- assay: ``evaluate_trec(qrels, run, MEASURES, per_query=True)``, the library call behind
  ``assay eval-trec --per-query`` (everything but printing the rows): its C reader (_trec_read.c)
  reads both files and ranks the run where it is built, DuckDB otherwise (the first line printed says
  which; ``--reference`` times DuckDB's reading even where the C reader is built).
- pytrec_eval, used the usual way: ``parse_qrel`` and ``parse_run`` (its own readers, into its
  nested dicts), then one ``RelevanceEvaluator(qrels, measures).evaluate(run)``.

Both give a value per query for nDCG@10, AP, RR, R@100 and P@10: measures trec_eval computes
itself (ndcg_cut_10, map, recip_rank, recall_100, P_10), so nothing is computed around the peer.
CPU time is user + system time of the child process (all its threads: DuckDB reads on every core)
from its start (interpreter and imports included) until the values are in hand, from
``resource.getrusage(RUSAGE_SELF)``; wall time runs from the parent starting the child to the same
point. Saving the values for the parity check, and the process's exit, come after and are not
counted, for either tool.

Each repeat prints both tools' CPU, wall and peak resident memory, the ratios assay / pytrec_eval
and the load average seen (``/proc/loadavg``, the one-minute figure before and after each tool);
the last lines give the ratios' spread (min-max over repeats) against the targets (CPU <= 0.5x,
wall <= 0.25x). The first repeat also checks parity: the largest difference per query between the
tools, over every measure.

Run: .venv/bin/python bench/eval_trec_speed.py [--sizes 10000x1000,100000x100] [--repeats 3] [--reference]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10")
PYTREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR": "recip_rank", "R@100": "recall_100", "P@10": "P_10"}
TOOLS = ("assay", "pytrec_eval")
JUDGED, RETRIEVED_JUDGED, SEED = 20, 15, 20240611
TARGETS = {"cpu": 0.5, "wall": 0.25}


# -- the files ----------------------------------------------------------------------------------
def write_collection(directory: Path, n_queries: int, depth: int) -> tuple[Path, Path]:
    """The qrels and run files for one size (written unless already there)."""
    import numpy as np

    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{n_queries}x{depth}-seed{SEED}"
    qrels_path, run_path = directory / f"{stem}.qrels", directory / f"{stem}.run"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(SEED)
    width = len(str(n_queries - 1))
    query = np.repeat(np.arange(n_queries), depth)
    position = np.tile(np.arange(depth), n_queries)
    base = rng.integers(0, 1_000_000, n_queries)
    doc = (base[query] + position * 997) % 1_000_000  # distinct within a query
    score = np.round(20.0 - 10.0 * position / depth + rng.normal(0.0, 0.3, query.size), 4)
    order = np.lexsort((-score, query))  # each query's lines by score, as a system writes them
    query, doc, score = query[order], doc[order], score[order]

    def ids(prefix: str, numbers, digits: int):
        text = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), digits, "0")
        return pc.binary_join_element_wise(prefix, text, "")

    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    rank = np.tile(np.arange(1, depth + 1), n_queries)
    pacsv.write_csv(pa.table({"qid": ids("q", query, width), "q0": pa.array(np.full(query.size, "Q0")),
                              "docno": ids("doc", doc, 7), "rank": pa.array(rank), "score": pa.array(score),
                              "tag": pa.array(np.full(query.size, "bench"))}), run_path.with_suffix(".tmp"),
                    options)

    # Judged among the retrieved: RETRIEVED_JUDGED distinct positions a query, drawn with weights
    # favouring the top (Gumbel top-k); the rest are documents the run never retrieves.
    weights = np.log(1.0 / (np.arange(depth) + 20.0))
    keys = weights + rng.gumbel(size=(n_queries, depth))
    picked = np.argpartition(-keys, RETRIEVED_JUDGED - 1, axis=1)[:, :RETRIEVED_JUDGED]
    by_position = (base[:, None] + picked * 997) % 1_000_000
    unretrieved = 1_000_000 + np.arange(n_queries)[:, None] * JUDGED + np.arange(JUDGED - RETRIEVED_JUDGED)
    judged = np.concatenate([by_position, unretrieved], axis=1)
    grades = rng.integers(0, 4, (n_queries, JUDGED))
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    q_col = np.repeat(np.arange(n_queries), JUDGED)
    pacsv.write_csv(pa.table({"qid": ids("q", q_col, width), "iter": pa.array(np.zeros(q_col.size, np.int64)),
                              "docno": ids("doc", judged.ravel(), 7), "rel": pa.array(grades.ravel())}),
                    qrels_path, options)
    run_path.with_suffix(".tmp").rename(run_path)
    return qrels_path, run_path


# -- one tool, in a child process ------------------------------------------------------------------
def run_assay(qrels_path: str, run_path: str) -> dict[str, dict[str, float]]:
    from assay.measures import trec_eval
    from assay.measures.trec_eval import evaluate_trec

    if os.environ.get("ASSAY_BENCH_REFERENCE"):
        trec_eval._COMPILED[:] = [None]

    out: dict[str, dict[str, float]] = {m: {} for m in MEASURES}
    for row in evaluate_trec(qrels_path, run_path, list(MEASURES), per_query=True):
        if row["query_id"] != "all":
            out[row["metric"]][row["query_id"]] = row["value"]
    return out


def run_pytrec_eval(qrels_path: str, run_path: str) -> dict[str, dict[str, float]]:
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    keys = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
    result = pytrec_eval.RelevanceEvaluator(qrels, keys).evaluate(run)
    return {m: {q: v[key] for q, v in result.items()} for m, key in PYTREC.items()}


def child(tool: str, qrels_path: str, run_path: str, dump: str, started: str) -> None:
    """One tool's work in this fresh process; prints its CPU time (all threads, since the process
    started: interpreter and imports included) and the wall time since the parent started it, both
    taken when the values are in hand (before they are saved for the parity check, and before exit)."""
    values = (run_assay if tool == "assay" else run_pytrec_eval)(qrels_path, run_path)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "wall": time.time() - float(started),
                      "rss": usage.ru_maxrss / 1024}), flush=True)
    if dump:
        with open(dump, "wb") as f:
            pickle.dump(values, f)


def timed_child(tool: str, qrels_path: Path, run_path: Path, dump: Path | None) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak resident MB) of one tool in a process of its own."""
    done = subprocess.run([sys.executable, __file__, "--child", tool, str(qrels_path), str(run_path), str(dump or ""),
                           repr(time.time())], check=True, stdout=subprocess.PIPE, text=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["cpu"], figures["wall"], figures["rss"]


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def worst(a: dict, b: dict) -> tuple[float, int]:
    """The largest |a - b| over every measure and query, and how many (measure, query) pairs differ."""
    largest, differ = 0.0, 0
    for m in MEASURES:
        if a[m].keys() != b[m].keys():
            return float("inf"), -1
        for q, v in a[m].items():
            d = abs(v - b[m][q])
            largest, differ = max(largest, d), differ + (d > 1e-9)
    return largest, differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000x1000,100000x100", help="QUERIESxDEPTH, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/assay-eval-trec-bench"))
    parser.add_argument("--only", choices=TOOLS, help="time one tool only (profiling)")
    parser.add_argument("--reference", action="store_true",
                        help="assay reads with DuckDB even where its C reader is built (the path without it)")
    args = parser.parse_args()
    from assay.measures.trec_eval import compiled_reader

    if args.reference:
        os.environ["ASSAY_BENCH_REFERENCE"] = "1"  # the children read it
    reading = "DuckDB's (--reference)" if args.reference else (
        "the C reader's (_trec_read.c)" if compiled_reader() else "DuckDB's (the C reader is not built)")
    print(f"cpus {os.cpu_count()}; measures {', '.join(MEASURES)} per query; each tool a fresh process, "
          f"reading both files included; assay's reading: {reading}")
    summary = []
    for size in args.sizes.split(","):
        n_queries, depth = (int(x) for x in size.split("x"))
        qrels_path, run_path = write_collection(args.dir, n_queries, depth)
        print(f"\n{n_queries} queries x {depth} results: run {run_path.stat().st_size / 1e6:.0f} MB, "
              f"qrels {qrels_path.stat().st_size / 1e6:.1f} MB ({run_path.parent})")
        ratios = {"cpu": [], "wall": []}
        for repeat in range(args.repeats):
            order = TOOLS if repeat % 2 == 0 else TOOLS[::-1]
            if args.only:
                order = (args.only,)
            figures, loads = {}, [load()]
            for tool in order:
                dump = args.dir / f"{tool}.pickle" if repeat == 0 and not args.only else None
                figures[tool] = timed_child(tool, qrels_path, run_path, dump)
                loads.append(load())
            line = "  ".join(f"{tool} cpu {figures[tool][0]:6.2f} s wall {figures[tool][1]:6.2f} s "
                             f"peak {figures[tool][2]:5.0f} MB" for tool in order)
            if len(figures) == 2:
                cpu = figures["assay"][0] / figures["pytrec_eval"][0]
                wall = figures["assay"][1] / figures["pytrec_eval"][1]
                ratios["cpu"].append(cpu), ratios["wall"].append(wall)
                line += f"  | assay/pytrec_eval cpu {cpu:.3f}x wall {wall:.3f}x"
            print(f"  repeat {repeat + 1}: {line}  | load {' '.join(f'{x:.2f}' for x in loads)}", flush=True)
            if repeat == 0 and not args.only:
                with open(args.dir / "assay.pickle", "rb") as f, open(args.dir / "pytrec_eval.pickle", "rb") as g:
                    largest, differ = worst(pickle.load(f), pickle.load(g))
                print(f"  parity: max |assay - pytrec_eval| per query {largest:.2e}, {differ} values differ by "
                      "more than 1e-9" if differ >= 0 else "  parity: the tools score different queries")
        if ratios["cpu"]:
            spread = "  ".join(f"{what} {min(r):.3f}-{max(r):.3f}x (target <= {TARGETS[what]}x: "
                               f"{'ok' if max(r) <= TARGETS[what] else 'MISSED'})" for what, r in ratios.items())
            summary.append(f"{n_queries} x {depth}: {spread}")
    if summary:
        print("\nassay / pytrec_eval over the repeats (min-max):")
        for line in summary:
            print(f"  {line}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:7])
    else:
        main()
