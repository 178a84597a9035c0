"""`assay lake history` on DuckDB and on local Spark, over a synthetic lake of N runs x Q questions x H hits.

The lake is written straight into Parquet partitions with numpy and pyarrow, in the layout of ``assay.store.lake``
(``LAKE/<table>/run_id=<RUN_ID>/part-0.parquet``, the warehouse's column types): per run its ``runs`` row
(one pipeline, one start time a minute apart), ``run_queries``, ``hits`` (stage ``final``, H per question) and
``measure_values`` (nDCG@10 at chunk level, one value per question), which history reads, and ``interval_memo`` (the
interval of those values the run's report showed, as `assay run --lake` stores it; not with --no-memo).

Timed, on each engine: opening the lake (Spark: session start and view registration), the history query
alone (the pipeline's runs, then the per-question values of the measure as Arrow: ``assay.analytics.history``,
what history asks the engine), and ``assay.verdicts.regression.history`` whole (the query, then a mean and interval per
run in Python: what `assay lake history` prints). The query is repeated (--repeats), history whole --whole-repeats
times (its intervals are the same Python on both engines); min, median and max are printed.

With --compact the lake is compacted first (`assay lake compact`, grace 0: the per-run partitions are removed at
once; the synthetic runs are all of one day, so each table becomes one file) and the compaction is timed;
--engines duckdb leaves Spark out.

Run: .venv/bin/python bench/lake_history.py [--runs 1000] [--questions 1000] [--hits 100] [--repeats 3]
     [--whole-repeats 1] [--no-memo] [--lake DIR (kept; reused when it already holds the same shape)] [--spark-master local[2]]
     [--compact] [--engines duckdb,spark]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

PIPELINE, MEASURE, LEVEL = "bm25", "nDCG@10", "chunk"
ARROW = {"VARCHAR": "string", "INTEGER": "int32", "BIGINT": "int64", "DOUBLE": "float64", "BOOLEAN": "bool",
         "TIMESTAMP": "timestamp[us]"}


def schemas() -> dict:
    """The warehouse's column types of the tables written, as Arrow schemas (from the migrations)."""
    import pyarrow as pa

    from assay.store.lake.writer import memory_warehouse

    con = memory_warehouse().con
    out = {}
    for table in ("runs", "run_queries", "hits", "measure_values", "interval_memo"):
        cols = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                           "ORDER BY ordinal_position", [table]).fetchall()
        if table == "interval_memo":  # a shared table: each partition's rows name their run
            cols = [("run_id", "VARCHAR"), *cols]
        out[table] = pa.schema([(c, pa.type_for_alias(ARROW[t])) for c, t in cols])
    return out


def build(lake: Path, runs: int, questions: int, hits: int, seed: int = 0, memo: bool = True) -> None:
    """``memo``: each run keeps the interval its report showed (interval_memo), as `assay run --lake` writes it;
    without, a lake of runs written before they did."""
    import numpy as np

    from assay.measures.memo import memo_key
    from assay.measures.stats import interval
    import pyarrow as pa
    import pyarrow.parquet as pq

    from assay.store.lake import PARTITION_FILE, partition_dir

    schema = schemas()
    rng = np.random.default_rng(seed)
    query_ids = pa.array([f"q{i:05d}" for i in range(questions)])
    n_docs = 20_000
    doc_ids = pa.array([f"doc{i:05d}.md" for i in range(n_docs)])
    chunk_ids = pa.array([f"doc{i:05d}.md#0-400" for i in range(n_docs)])
    q_of_hit = pa.array(np.repeat(np.arange(questions), hits))
    ranks = np.tile(np.arange(1, hits + 1, dtype=np.int32), questions)
    start = datetime(2026, 1, 1)
    config = json.dumps({"pipeline": PIPELINE, "synthetic": True})

    def write(table: str, run_id: str, columns: dict) -> None:
        data = pa.table({name: columns.get(name) if name in columns else pa.nulls(len(next(iter(columns.values()))),
                                                                                   schema[table].field(name).type)
                         for name in schema[table].names}, schema=schema[table])
        target = partition_dir(lake, table, run_id)
        target.mkdir(parents=True)
        pq.write_table(data, target / PARTITION_FILE)

    for r in range(runs):
        run_id = f"20260101T{r:06d}-bench"
        quality = 0.5 + 0.2 * np.sin(r / 50)  # a slow drift, so history has a shape
        docs = rng.integers(0, n_docs, size=questions * hits)
        scores = np.sort(rng.random((questions, hits)), axis=1)[:, ::-1].ravel()
        write("hits", run_id, {
            "run_id": pa.array(np.full(questions * hits, run_id)), "query_id": query_ids.take(q_of_hit),
            "stage": pa.array(np.full(questions * hits, "final")), "rank": pa.array(ranks),
            "chunk_id": chunk_ids.take(pa.array(docs)), "doc_id": doc_ids.take(pa.array(docs)),
            "score": pa.array(scores)})
        write("run_queries", run_id, {
            "run_id": pa.array([run_id] * questions), "query_id": query_ids,
            "latency_ms": pa.array(rng.gamma(2.0, 5.0, questions)), "n_results": pa.array(np.full(questions, hits, np.int32))})
        values = np.clip(rng.normal(quality, 0.25, questions), 0.0, 1.0)
        write("measure_values", run_id, {
            "run_id": pa.array([run_id] * questions), "stage": pa.array(["final"] * questions),
            "level": pa.array([LEVEL] * questions), "query_id": query_ids, "measure": pa.array([MEASURE] * questions),
            "family": pa.array(["nDCG"] * questions), "cutoff": pa.array(np.full(questions, 10, np.int32)),
            "unit": query_ids, "value": pa.array(values)})
        if memo:  # the values in question order (the ids sort as written), the run's seed, 1,000 resamples
            low, high = interval(values.tolist(), "bootstrap", r, 1000)
            write("interval_memo", run_id, {"run_id": pa.array([run_id]),
                                            "memo_key": pa.array([memo_key(values.tolist(), "bootstrap", r, 1000)]),
                                            "ci_low": pa.array([low]), "ci_high": pa.array([high])})
        started = start + timedelta(minutes=r)
        write("runs", run_id, {  # last, as the writer does: the run is visible when its runs partition is
            "run_id": pa.array([run_id]), "started_at": pa.array([started]),
            "finished_at": pa.array([started + timedelta(seconds=30)]), "status": pa.array(["complete"]),
            "pipeline": pa.array([PIPELINE]), "config": pa.array([config]), "config_hash": pa.array(["c" * 64]),
            "corpus_hash": pa.array(["a" * 64]), "judgments_hash": pa.array(["b" * 64]),
            "chunk_set": pa.array(["d" * 64]), "assay_version": pa.array(["bench"]), "versions": pa.array(["{}"]),
            "seed": pa.array([r], pa.int32()), "tie_break": pa.array(["score desc, chunk_id asc"]),
            "kind": pa.array(["retrieval"]), "gate_eligible": pa.array([True])})


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(fn, repeats: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return times, result


def history_query(reader):
    """What history asks the engine: the pipeline's runs, then the measure's per-question values as Arrow."""
    from assay.analytics import connect
    from assay.analytics.history import ordered_runs, series
    from assay.measures.registry import parse_measure

    con = connect(reader)
    rows = ordered_runs(con, PIPELINE)
    return con.to_pyarrow(series(reader, con, [r["run_id"] for r in rows], parse_measure(MEASURE), LEVEL)).num_rows


def spread(times: list[float]) -> str:
    return (f"min {min(times):.2f} s, median {statistics.median(times):.2f} s, max {max(times):.2f} s "
            f"({len(times)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--hits", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lake", type=Path, help="where to build the lake (kept); default: a temporary directory")
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--whole-repeats", type=int, default=1,
                        help="repeats of history whole (its interval per run costs ~0.1 s of Python at 1,000 questions)")
    parser.add_argument("--no-memo", action="store_true",
                        help="runs without their stored intervals (a lake written before runs kept them)")
    parser.add_argument("--skip-full", action="store_true", help="time only the query, not history's statistics")
    parser.add_argument("--compact", action="store_true",
                        help="compact the lake first (assay.store.lake.compact, grace 0) and time that")
    parser.add_argument("--engines", default="duckdb,spark", help="which engines to time (comma-separated)")
    args = parser.parse_args()

    from assay.store.lake import open_lake
    from assay.verdicts.regression import history

    shape = f"{args.runs} runs x {args.questions} questions x {args.hits} hits"
    scratch = None
    lake = args.lake
    if lake is None:
        scratch = Path(tempfile.mkdtemp(prefix="assay-bench-lake-"))
        lake = scratch / "lake"
    marker = lake / "_bench_shape.json"  # a name readers skip
    wanted = {"runs": args.runs, "questions": args.questions, "hits": args.hits, "memo": not args.no_memo}
    try:
        built = json.loads(marker.read_text()) if marker.is_file() else None
        if built is not None and built.get("compacted") and not args.compact:
            built = None  # a compacted lake cannot be timed as an uncompacted one: build it again
        if built is not None and {k: v for k, v in built.items() if k != "compacted"} == wanted:
            print(f"lake: {lake} ({shape}, built before{', compacted' if built.get('compacted') else ''})")
        else:
            built = None
            shutil.rmtree(lake, ignore_errors=True)
            t = time.perf_counter()
            build(lake, args.runs, args.questions, args.hits, memo=not args.no_memo)
            marker.write_text(json.dumps(wanted))
            print(f"built {lake} ({shape}) in {time.perf_counter() - t:.1f} s")
        if args.compact and not (built or {}).get("compacted"):
            from assay.store.lake.compact import compact

            files = sum(1 for _ in lake.rglob("*.parquet"))
            t = time.perf_counter()
            outcome = compact(lake, grace_s=0)
            took = time.perf_counter() - t
            marker.write_text(json.dumps({**wanted, "compacted": True}))
            print(f"compacted in {took:.1f} s: {files:,} files -> {sum(1 for _ in lake.rglob('*.parquet')):,} "
                  f"({len(outcome.written)} segment(s), {len(outcome.removed):,} partitions removed)")
        print(f"lake size on disk: {size_of(lake) / 2**20:.1f} MiB; hits rows: {args.runs * args.questions * args.hits:,}")

        results = {}
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
        for engine, settings in (("duckdb", {}), ("spark", {"spark_master": args.spark_master})):
            if engine not in engines:
                continue
            t = time.perf_counter()
            reader = open_lake(lake, engine=engine, **settings)
            opened = time.perf_counter() - t
            try:
                query_times, n = timed(lambda: history_query(reader), args.repeats)
                full_times, h = ([], None) if args.skip_full else timed(
                    lambda: history(reader, PIPELINE, MEASURE, LEVEL), args.whole_repeats)
            finally:
                reader.close()
            assert n == args.runs * args.questions, f"{engine}: {n} values"
            if h is not None:
                assert len(h["points"]) == args.runs, f"{engine}: {len(h['points'])} points"
            results[engine] = (opened, query_times, full_times, h)
            print(f"{engine}: open {opened:.2f} s; history query {spread(query_times)}"
                  + ("" if args.skip_full else f"; history whole {spread(full_times)}"))
        if len(results) < 2:
            return
        d, s = results["duckdb"], results["spark"]
        print(f"spark / duckdb, median history query: {statistics.median(s[1]) / statistics.median(d[1]):.1f}x")
        if not args.skip_full:
            print(f"spark / duckdb, median history whole: {statistics.median(s[2]) / statistics.median(d[2]):.1f}x")
            same = [(a["run_id"], a["value"]) for a in d[3]["points"]] == [(a["run_id"], a["value"]) for a in s[3]["points"]]
            print(f"same history on both engines: {same}")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
