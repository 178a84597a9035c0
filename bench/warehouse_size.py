"""Bytes a run adds to the warehouse per hit row, before migrations 013 and 014 (schema 012: the `hits` table and
its primary key; run_queries, stage_latency and measure_values with theirs) and after them (hit_rows, hit_lists,
chunk_keys; a list equal to the first rows of its input stored once; no index on the per-run tables), side by
side, with the measure SQL's time over each.

What it writes, under --dir (default a temporary directory):

- a synthetic collection: 1,500 documents of sentences drawn from a Zipf vocabulary (4,679 chunks with the
  default recursive chunker) and --questions judged questions (a few words of a gold sentence plus noise);
- one real BM25 run of it at --depth (default 100): stages ``bm25`` and ``final`` (final the whole bm25 list);
- one hybrid run: ``bm25``, ``dense``, ``fusion`` (assay's own RRF of the two, cut at the depth) and ``final``
  (the fusion list). Its dense list is simulated unless --dense real (the offline MiniLM model: about 20 minutes
  on two busy cores): --depth chunks drawn at random per question with float32 scores in descending order, as
  the dense stage returns them.

For each pipeline and layout, a fresh warehouse file gets two runs (the first writes the corpus, chunks, tokens
and judgments once), then --runs more of the same retrieval under new run ids, each in its own transaction.
Printed per layout:

- file growth: the file's growth per run after CHECKPOINT (every table a run writes), and over the run's hit rows
  (the rows the `hits` table held, or the `hits` view reads); blocks used: the same for the file's blocks in use
  (a checkpoint that rewrites a partly filled row group frees blocks the next runs fill, so over many runs the
  file grows by about this);
- hit tables: the bytes of the hit tables alone per run (`hits`, or hit_rows + hit_lists; chunk_keys is written
  once per chunk set, not per run), measured by copying them, indexes and row order kept, into an empty file:
  per hit row and per row stored (a list read from its input is stored once);
- measure_values per run, the same way (since migration 014 without its index), and the median write of a run.

The old layout is written by the code of today with the hits insert of before (one row per hit into the `hits`
table, no chunk keys) into a file with the migrations up to 012: nothing else differs.

Then the measure SQL: every default measure's per-question values of the last run (``per_query``, what a run's
stored values, `assay measures compute` and `compare` run), on both warehouses in turns, --repeats times:
min / median / max seconds and the ratio new / old of the medians, with the load average.

Run: .venv/bin/python bench/warehouse_size.py [--questions 1000] [--depth 100] [--runs 6] [--repeats 3]
     [--dense simulated|real] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

HIT_COLUMNS = ["run_id", "query_id", "stage", "rank", "chunk_id", "doc_id", "score"]
OLD_SCHEMA = 12  # the last migration with a hits table


def collection(target: Path, questions: int, docs: int = 1500, seed: int = 0) -> None:
    """``corpus/`` and ``judgments.jsonl`` under ``target``."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(4000)})
    weights = [1 / (i + 1) for i in range(len(vocab))]
    sentences = []
    for d in range(docs):
        doc_id = f"topic{d % 37}/doc{d:05d}.md"
        lines = [" ".join(rng.choices(vocab, weights, k=rng.randint(8, 20))).capitalize() + "."
                 for _ in range(rng.randint(12, 30))]
        sentences += [(doc_id, s) for s in lines]
        path = target / "corpus" / doc_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(" ".join(lines) + "\n")
    with open(target / "judgments.jsonl", "w") as f:
        for q in range(questions):
            doc, sentence = rng.choice(sentences)
            words = sentence.rstrip(".").split()
            query = " ".join(rng.sample(words, min(5, len(words))) + rng.choices(vocab, k=2))
            f.write(json.dumps({"query_id": f"q{q:04d}", "query": query, "category": "normal", "form": "match",
                                "hard_class": "normal", "gold": [{"doc": doc, "quote": sentence}]}) + "\n")


def simulated_hybrid(bm25, depth: int, seed: int = 0):
    """``bm25`` with a dense list per question (random chunks, float32 scores, descending), their RRF fusion cut
    at ``depth`` and a final list equal to it."""
    import numpy as np

    from assay.retrieval.fusion.rrf import rrf
    from assay.retrieval import Hit

    rng = np.random.default_rng(seed)
    chunks = bm25.chunks
    lists: dict[str, list] = {}
    for q, stage, rank, chunk_id, doc_id, score in bm25.hits:
        if stage == "bm25":
            lists.setdefault(q, []).append(Hit(chunk_id, doc_id, score))
    hits, query_rows, latency = [], [], []
    for q, _, _ in bm25.query_rows:
        picked = rng.choice(len(chunks), size=min(depth, len(chunks)), replace=False)
        scores = np.sort(rng.uniform(0.2, 0.9, size=len(picked)).astype(np.float32))[::-1]
        dense = [Hit(chunks[i].chunk_id, chunks[i].doc_id, float(s)) for i, s in zip(picked, scores)]
        fusion = rrf({"bm25": lists.get(q, []), "dense": dense})[:depth]
        for stage, ranked in (("bm25", lists.get(q, [])), ("dense", dense), ("fusion", fusion), ("final", fusion)):
            hits += [(q, stage, rank, h.chunk_id, h.doc_id, h.score) for rank, h in enumerate(ranked, 1)]
            latency.append((q, stage, 1.0))
        query_rows.append((q, 5.0, len(fusion)))
    config = {**bm25.config, "pipeline": "hybrid", "stages": ["bm25", "dense", "fusion", "final"]}
    return replace(bm25, config=config, hits=hits, query_rows=query_rows, stage_latency=latency,
                   stages=["bm25", "dense", "fusion", "final"])


def old_warehouse(path: Path):
    """A warehouse file of schema 012: the migrations up to it, applied as Warehouse._migrate applies them."""
    import duckdb

    from assay.core.sqlfiles import migrations
    from assay.store.warehouse import Warehouse

    wh = Warehouse(path, duckdb.connect(str(path)), read_only=False)
    with wh.transaction(journal=False):
        wh.con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                       "applied_at TIMESTAMP NOT NULL)")
        for version, name, sql in migrations():
            if version <= OLD_SCHEMA:
                wh.con.execute(sql)
                wh.con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
    return wh


@contextmanager
def old_write_path():
    """Runs written as before migration 013: every hit a row of the hits table, no chunk keys."""
    import assay.store.hits as store

    saved = store.write_hits, store.write_chunk_keys

    def write_hits(wh, run_id, chunk_set, hits, stages):
        wh._insert("hits", HIT_COLUMNS, [(run_id, *h) for h in hits])

    store.write_hits, store.write_chunk_keys = write_hits, lambda *args: None
    try:
        yield
    finally:
        store.write_hits, store.write_chunk_keys = saved


def size(wh) -> tuple[int, int]:
    """The file's size after CHECKPOINT, and the bytes of its blocks in use (the rest are free blocks, which
    later writes fill before the file grows)."""
    wh.con.execute("CHECKPOINT")
    block_size, used = wh.con.execute("SELECT block_size, used_blocks FROM pragma_database_size()").fetchall()[0]
    return os.path.getsize(wh.path), block_size * used


def alone(wh, tables: tuple[str, ...]) -> int:
    """Bytes ``tables`` take by themselves: copied (row order, constraints and indexes kept) into an empty file,
    its growth after CHECKPOINT."""
    out = Path(f"{wh.path}.alone")
    for p in (out, Path(f"{out}.wal")):
        p.unlink(missing_ok=True)
    wh.con.execute("ATTACH ? AS alone", [str(out)])
    try:
        for table in tables:
            (ddl,) = wh.con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ? AND database_name = "
                                    "current_database()", [table]).fetchall()[0]
            wh.con.execute(ddl.replace(f"CREATE TABLE {table}", f"CREATE TABLE alone.{table}", 1))
        wh.con.execute("CHECKPOINT alone")
        empty = os.path.getsize(out)
        for table in tables:
            wh.con.execute(f"INSERT INTO alone.{table} SELECT * FROM {table} ORDER BY rowid")
        wh.con.execute("CHECKPOINT alone")
        return os.path.getsize(out) - empty
    finally:
        wh.con.execute("DETACH alone")
        out.unlink(missing_ok=True)


HIT_TABLES = {"old": ("hits",), "new": ("hit_rows", "hit_lists")}


def fill(layout: str, path: Path, record, runs: int) -> dict:
    """Write ``record`` twice, then ``runs`` times more under new run ids; what each of those added."""
    from assay.runs.sinks import store_run  # rows and measure values, as a run stores them
    from assay.store.warehouse import Warehouse

    wh = old_warehouse(path) if layout == "old" else Warehouse.open(path)
    with old_write_path() if layout == "old" else _nothing():
        for i in range(2):  # the first brings the corpus, chunks and tokens; the second the first freed blocks
            store_run(wh, replace(record, run_id=f"{layout}-warm-up-{i}"))
        start, writes, ids = size(wh), [], []
        for i in range(runs):
            ids.append(f"{layout}-{i:03d}")
            t0 = time.perf_counter()
            store_run(wh, replace(record, run_id=ids[-1]))
            writes.append(time.perf_counter() - t0)
        grown, used = (b - a for a, b in zip(start, size(wh)))
    stored = len(record.hits) if layout == "old" else wh.con.execute(  # each stored row once
        "SELECT COUNT(*) FROM hit_rows WHERE list_key IN (SELECT list_key FROM hit_lists WHERE run_id = ?)",
        [ids[-1]]).fetchall()[0][0]
    return {"wh": wh, "run_id": ids[-1], "run_bytes": grown / runs, "used_bytes": used / runs, "stored": stored,
            "hit_bytes": alone(wh, HIT_TABLES[layout]) / (runs + 2),
            "values_bytes": alone(wh, ("measure_values",)) / (runs + 2), "write_s": statistics.median(writes)}


@contextmanager
def _nothing():
    yield


def measure_sql(wh, run_id: str) -> float:
    from assay.measures.compute import per_query
    from assay.measures.registry import DEFAULT_MEASURES

    t0 = time.perf_counter()
    for measure in DEFAULT_MEASURES:
        per_query(wh, run_id, measure)
    return time.perf_counter() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dense", choices=("simulated", "real"), default="simulated")
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args(argv)

    os.environ["ASSAY_QUIET"] = "1"
    from assay.runs.runner import RunOptions, execute_run

    base = args.dir or Path(tempfile.mkdtemp(prefix="assay-warehouse-size-"))
    coll = base / "collection"
    if not (coll / "judgments.jsonl").exists():
        collection(coll, args.questions)
    corpus, judgments = coll / "corpus", coll / "judgments.jsonl"
    bm25 = execute_run(corpus, judgments, RunOptions(depth=args.depth))
    hybrid = (execute_run(corpus, judgments, RunOptions("hybrid", depth=args.depth)) if args.dense == "real"
              else simulated_hybrid(bm25, args.depth))
    print(f"{len(bm25.query_rows)} questions, depth {args.depth}, {len(bm25.chunks)} chunks; "
          f"{args.runs} runs per layout; load {_load()}")
    results = {}
    for name, record in (("bm25", bm25), (f"hybrid ({args.dense} dense)", hybrid)):
        stages = "+".join(record.stages)
        print(f"\n{name}: {len(record.hits)} hit rows a run ({stages})")
        print(f"  {'layout':7} {'file growth':>12} {'B/hit row':>10} {'blocks used':>12} {'B/hit row':>10} | "
              f"{'hit tables':>11} {'B/hit row':>10} {'stored rows':>12} {'B/stored row':>13} | "
              f"{'measure_values':>15} | {'write':>7}")
        for layout in ("old", "new"):
            path = base / f"{layout}-{name.split()[0]}.duckdb"
            for p in (path, Path(str(path) + ".wal")):
                p.unlink(missing_ok=True)
            r = fill(layout, path, record, args.runs)
            results[(name, layout)] = r
            print(f"  {layout:7} {r['run_bytes'] / 1e6:9.2f} MB {r['run_bytes'] / len(record.hits):10.2f} "
                  f"{r['used_bytes'] / 1e6:9.2f} MB {r['used_bytes'] / len(record.hits):10.2f} | "
                  f"{r['hit_bytes'] / 1e6:8.2f} MB {r['hit_bytes'] / len(record.hits):10.2f} {r['stored']:12d} "
                  f"{r['hit_bytes'] / r['stored']:13.2f} | {r['values_bytes'] / 1e6:12.2f} MB | {r['write_s']:5.2f} s")
        old, new = results[(name, "old")], results[(name, "new")]
        print(f"  new/old: file growth {new['run_bytes'] / old['run_bytes']:.3f}, blocks used "
              f"{new['used_bytes'] / old['used_bytes']:.3f}, hit tables "
              f"{new['hit_bytes'] / old['hit_bytes']:.3f}, write {new['write_s'] / old['write_s']:.2f}")
        times = {"old": [], "new": []}
        for _ in range(args.repeats):
            for layout in ("old", "new"):
                r = results[(name, layout)]
                times[layout].append(measure_sql(r["wh"], r["run_id"]))
        print(f"  measure SQL (every default measure, one run), {args.repeats} turns: " + "; ".join(
            f"{layout} {min(t):.2f} / {statistics.median(t):.2f} / {max(t):.2f} s" for layout, t in times.items())
              + f"; new/old {statistics.median(times['new']) / statistics.median(times['old']):.2f}")
        for layout in ("old", "new"):
            results[(name, layout)]["wh"].close()
    print(f"\nload after: {_load()}")


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


if __name__ == "__main__":
    main()
