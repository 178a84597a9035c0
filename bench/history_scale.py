"""`assay history`, `report`, `regress` and `compare` over warehouses of 10, 100 and 1,000 runs x 1,000 questions.

What it builds (under --dir, default /tmp/assay-history-scale; kept and reused):

- a synthetic collection: --docs documents of sentences drawn from a Zipf vocabulary, and --questions judged
  questions (85% normal with one gold sentence, 5% ambiguous with two, 5% adversarial, 5% no_answer; forms
  match/gap, three hard classes), each asking a few words of its gold sentence plus noise;
- ten real BM25 runs of it through `assay.runs.runner.run` (depth 100, chunk sizes 300, 340, ... 660), each with
  its hits at stages ``bm25`` and ``final`` and its stored ``measure_values``, as any run writes them;
- warehouses of N runs, by SQL: run i is a copy of real run ``i % 10`` under a new id, --spacing seconds
  after run i - 1 (30 s by default, about what one such run takes; run ids carry their start time), its hit
  scores multiplied by a factor drawn from its index (rankings, and so every value, unchanged): every table
  holding rows of the real runs (hit_lists, run_queries, run_stages, stage_latency, measure_values) copied row
  for row, the runs row last, and the hit rows each real run stores (hit_rows, migration 013: the final stage
  of a BM25 run reads its bm25 list) stored again for each copy under list keys of its own.

Timed, each command in a fresh process (`python -m assay ...`, what a user waits for), the sizes interleaved
within each repeat so they share the load: ``history --pipeline bm25 --metric nDCG@10``, ``report`` of the
oldest run, ``regress`` of the newest against ``--baseline latest`` with ``--max-drop nDCG@10=0.02``, and
``compare`` of the two newest runs. Printed: min / median / max seconds, the cost per run read (history:
every run; report: one; regress and compare: two), and the ratio of each size's median to the smallest
size's, with the load average seen.

Run: .venv/bin/python bench/history_scale.py [--sizes 10,100,1000] [--repeats 3] [--dir DIR] [--spacing 30]
     [--src DIR (the src/ of another checkout, timed side by side as "peer")] [--peer-sizes 10,100] [--peer-repeats N]
     [--only history,report,regress,compare]

With --src, the peer writes its own ten real runs and its warehouses are copied from those (in the schema that
code writes: a checkout from before migration 013 stores a hits table with its primary key, ~9 GiB at 1,000
runs; this checkout's take 1.1 GiB), so each version reads what it would have written. Each command runs with
the environment it is given minus OPENBLAS_NUM_THREADS, so each version sets its own BLAS threads as a user
would meet them. Check `df -h` on --dir first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

VARIANTS = 10
PIPELINE, METRIC = "bm25", "nDCG@10"
CATEGORIES = [("normal", 85), ("ambiguous", 5), ("adversarial", 5), ("no_answer", 5)]
HARD = ("normal", "near-duplicate", "paraphrase")
SCANNED = ("hit_rows", "hit_lists", "run_queries", "measure_values", "stage_latency", "answers")


def collection(target: Path, questions: int, docs: int, seed: int = 0) -> None:
    """Write ``corpus/`` and ``judgments.jsonl`` under ``target``."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(4000)})
    weights = [1 / (i + 1) for i in range(len(vocab))]
    corpus = target / "corpus"
    corpus.mkdir(parents=True)
    sentences = []  # (doc, sentence)
    for d in range(docs):
        lines = []
        for _ in range(rng.randint(12, 30)):
            words = rng.choices(vocab, weights, k=rng.randint(8, 20))
            lines.append(" ".join(words).capitalize() + ".")
        name = f"doc{d:04d}.md"
        (corpus / name).write_text(f"# Document {d}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        sentences += [(name, s) for s in lines]
    kinds = [c for c, w in CATEGORIES for _ in range(w)]
    with open(target / "judgments.jsonl", "w", encoding="utf-8") as out:
        for q in range(questions):
            category = kinds[q % len(kinds)]
            picked = rng.sample(sentences, 2 if category == "ambiguous" else 1)
            words = picked[0][1].rstrip(".").lower().split()
            asked = rng.sample(words, min(len(words), rng.randint(2, 6))) + rng.choices(vocab, k=rng.randint(0, 3))
            gold = [] if category == "no_answer" else [{"doc": d, "quote": s} for d, s in picked]
            record = {"query_id": f"q{q:05d}", "query": " ".join(asked) + "?", "category": category,
                      "form": "match" if rng.random() < 0.7 else "gap", "hard_class": rng.choice(HARD), "gold": gold}
            out.write(json.dumps(record) + "\n")


TEMPLATE_RUNS = """
import sys, time
from pathlib import Path
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
path, data, variants = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
with Warehouse.open(path) as wh:
    for i in range(variants):
        t = time.perf_counter()
        run(wh, data / "corpus", data / "judgments.jsonl", RunOptions(chunk_size=300 + 40 * i, depth=100))
        print(f"  template run {i + 1}/{variants}: {time.perf_counter() - t:.1f} s", flush=True)
"""


def templates(path: Path, data: Path, questions: int, docs: int, src: Path) -> None:
    """The ten real runs every warehouse copies, written by the code under ``src`` (in a process of its own)."""
    if not (data / "judgments.jsonl").exists():
        shutil.rmtree(data, ignore_errors=True)
        collection(data, questions, docs)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-c", TEMPLATE_RUNS, str(partial), str(data), str(VARIANTS)], check=True,
                   env={**os.environ, "PYTHONPATH": str(src)})
    partial.rename(path)


def build(path: Path, runs: int, template: Path, spacing: float, batch: int = 50) -> float:
    """A warehouse of ``runs`` runs at ``path``: the template's ten, then copies of them made by SQL, one every
    ``spacing`` seconds after the last real one. Every table holding rows of the template's runs is copied row
    for row under the new run id (``runs`` last, as a run is written); each copy's stored hit lists
    (``hit_rows``, migration 013) are copied too, under list keys of its own after every earlier run's, as a
    run of its own stores them, with their scores scaled."""
    import duckdb
    from datetime import timedelta

    t = time.perf_counter()
    partial = path.with_suffix(".partial")
    shutil.copyfile(template, partial)
    con = duckdb.connect(str(partial))
    con.execute("SET enable_progress_bar = false")
    real = con.execute("SELECT run_id, started_at FROM runs ORDER BY started_at, run_id").fetchall()
    compact = bool(con.execute("SELECT COUNT(*) FROM duckdb_tables() WHERE table_name = 'hit_rows'").fetchall()[0][0])
    span = con.execute("SELECT MAX(list_key) FROM hit_lists").fetchall()[0][0] if compact else 0  # one copy's keys
    clones = []
    for i in range(len(real), runs):
        started = real[-1][1] + timedelta(seconds=spacing * (i - len(real) + 1))
        factor = 1 + random.Random(i).random()  # > 0: every ranking kept
        clones.append((f"{started:%Y%m%dT%H%M%S}-c{i:05d}", real[i % len(real)][0], i, started, factor,
                       span * (i // len(real))))
    con.execute("CREATE TEMP TABLE clones (run_id VARCHAR, source VARCHAR, idx INTEGER, started_at TIMESTAMP, "
                "factor DOUBLE, key_offset INTEGER)")
    if clones:
        con.executemany("INSERT INTO clones VALUES (?, ?, ?, ?, ?, ?)", clones)
    tables = [name for name, in con.execute(
        "SELECT t.table_name FROM duckdb_tables() t JOIN duckdb_columns() c ON c.table_oid = t.table_oid "
        "WHERE t.schema_name = 'main' AND NOT t.temporary AND c.column_name = 'run_id' AND t.table_name <> 'runs' "
        "ORDER BY t.table_name").fetchall()
              if con.execute(f"SELECT COUNT(*) FROM {name} WHERE run_id IN (SELECT run_id FROM runs)").fetchall()[0][0]]
    copied = {table: [c for c, in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index",
        [table]).fetchall()] for table in tables + ["runs"]}
    new = {"run_id": "c.run_id", "list_key": "t.list_key + c.key_offset",
           "started_at": "c.started_at", "finished_at": "c.started_at + INTERVAL 30 SECOND"}
    for lo in range(len(real), runs, batch):
        con.execute("BEGIN")
        if compact:  # each copy's own rows of every list its source stores, in list order, as write_hits appends
            con.execute("INSERT INTO hit_rows (list_key, rank, chunk_key, score) "
                        "SELECT h.list_key + c.key_offset, h.rank, h.chunk_key, h.score * c.factor "
                        "FROM clones c JOIN (SELECT DISTINCT run_id, list_key FROM hit_lists) l ON l.run_id = c.source "
                        "JOIN hit_rows h ON h.list_key = l.list_key "
                        "WHERE c.idx >= ? AND c.idx < ? ORDER BY c.idx, h.list_key, h.rank", [lo, lo + batch])
        for table in tables + ["runs"]:  # a hits table (before migration 013) is one of them
            cols = copied[table]
            select = ", ".join(new[c] if c in ("run_id", "list_key") or (c in new and table == "runs") else
                               "t.score * c.factor" if c == "score" and table == "hits" else f"t.{c}" for c in cols)
            con.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {table} t "
                        "JOIN clones c ON t.run_id = c.source WHERE c.idx >= ? AND c.idx < ? ORDER BY c.idx",
                        [lo, lo + batch])
        con.execute("COMMIT")
    con.execute("CHECKPOINT")
    con.close()
    partial.rename(path)
    return time.perf_counter() - t


def up_to_date(path: Path) -> None:
    """Apply any migration this checkout has that the file lacks, before anything is timed on it."""
    import duckdb

    from assay.store.warehouse import Warehouse

    def version() -> int:
        con = duckdb.connect(str(path), read_only=True)
        try:
            return con.execute("SELECT MAX(version) FROM schema_migrations").fetchall()[0][0]
        finally:
            con.close()

    before, t = version(), time.perf_counter()
    Warehouse.open(path).close()
    if version() != before:
        print(f"  {path.name}: migrated from schema {before} in {time.perf_counter() - t:.1f} s", flush=True)


def shape(path: Path) -> dict:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        runs = [r for r, in con.execute("SELECT run_id FROM runs ORDER BY started_at, run_id").fetchall()]
        hits = con.execute("SELECT COUNT(*) FROM hits").fetchall()[0][0]
        compact = con.execute("SELECT COUNT(*) FROM duckdb_tables() WHERE table_name = 'hit_rows'").fetchall()[0][0]
        stored = con.execute("SELECT COUNT(*) FROM hit_rows" if compact else "SELECT COUNT(*) FROM hits").fetchall()[0][0]
        questions = con.execute("SELECT COUNT(*) FROM run_queries WHERE run_id = ?", [runs[0]]).fetchall()[0][0]
    finally:
        con.close()
    return {"runs": runs, "hits": hits, "stored": stored, "questions": questions, "bytes": path.stat().st_size}


def scanned(path: Path, run_id: str) -> dict[str, int]:
    """Rows DuckDB scans, per table, for what `assay report` reads of ``run_id`` (its header, the loss funnel, its
    stored values and question labels), from DuckDB's profile of each query."""
    import json
    import tempfile

    from assay.core.sqlfiles import load_sql
    from assay.store.warehouse import Warehouse

    # the report's own queries (assay.present.report.run_header and attribution; the answer funnel only for a run with
    # answers, which these BM25 runs have not)
    queries = [(load_sql(f"reports/{name}"), {"run_id": run_id})
               for name in ("run_summary", "latency", "stages", "attribution", "answer_reasons")]
    queries += [("SELECT measure, unit, level, value FROM measure_values WHERE run_id = ? AND stage = 'final'",
                 [run_id]),
                ("SELECT query_id, category, form, hard_class FROM eval_questions WHERE run_id = ?", [run_id])]
    totals: dict[str, int] = {}

    def walk(node):
        if node.get("type") == "TABLE_SCAN":
            table = (node.get("extra_info") or {}).get("Table", "").split(".")[-1]
            totals[table] = totals.get(table, 0) + int(node.get("rows_scanned") or 0)
        for child in node.get("children", []):
            walk(child)

    with Warehouse.open(path, read_only=True) as wh, tempfile.TemporaryDirectory() as tmp:
        for sql, params in queries:
            wh.con.execute("PRAGMA enable_profiling = 'json'")
            wh.con.execute(f"PRAGMA profiling_output = '{tmp}/profile.json'")
            wh.con.execute(sql, params).fetchall()
            wh.con.execute("PRAGMA disable_profiling")
            for node in json.loads(Path(tmp, "profile.json").read_text())["operator"]:
                walk(node)
    return totals


COMMANDS = ("history", "report", "regress", "compare")
READS = {"history": None, "report": 1, "regress": 2, "compare": 2}  # runs each command reads (None: every one)


def arguments(command: str, runs: list[str]) -> list[str]:
    return {"history": ["history", "--pipeline", PIPELINE, "--metric", METRIC],
            "report": ["report", runs[0]],
            "regress": ["regress", runs[-1], "--max-drop", f"{METRIC}=0.02"],
            "compare": ["compare", runs[-2], runs[-1]]}[command]


def timed(args: list[str], src: Path, warehouse: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python -m assay ARGS`` with ``src`` first on the path, and its output."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}  # each version as a user runs it
    env["PYTHONPATH"] = str(src)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "assay", *args, "--warehouse", str(warehouse)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - timed.cpu_before
    timed.cpu_before = usage.ru_utime + usage.ru_stime
    if proc.returncode not in (0, 7):
        raise SystemExit(f"assay {' '.join(args)} failed ({proc.returncode}):\n{err}")
    return wall, cpu, out


timed.cpu_before = 0.0


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path("/proc/loadavg").exists() else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="runs per warehouse, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/assay-history-scale"))
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--spacing", type=float, default=30.0,
                        help="seconds between the copies' start times (30: about one 1,000-question BM25 run)")
    parser.add_argument("--src", type=Path, help="the src/ of another checkout, timed as 'peer' beside this one")
    parser.add_argument("--peer-sizes", help="sizes the peer is timed at (default: all)")
    parser.add_argument("--peer-repeats", type=int, help="repeats of the peer (default: --repeats)")
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to time, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    commands = [c for c in args.only.split(",") if c]
    peer_sizes = {int(s) for s in args.peer_sizes.split(",")} if args.peer_sizes else set(sizes)
    args.peer_repeats = args.repeats if args.peer_repeats is None else args.peer_repeats
    args.dir.mkdir(parents=True, exist_ok=True)
    versions = [("this", ROOT / "src")] + ([("peer", args.src)] if args.src else [])
    shapes = {}  # (version, size) -> (path, shape)
    for name, src in versions:
        suffix = "" if name == "this" else "-peer"  # the peer writes and reads warehouses of its own schema
        template = args.dir / f"template-{args.questions}q{suffix}.duckdb"
        if not template.exists():
            print(f"template{suffix}: {VARIANTS} real runs of {args.questions} questions by {src}", flush=True)
            templates(template, args.dir / f"collection-{args.questions}q", args.questions, args.docs, src)
        if name == "this":
            up_to_date(template)
        for size in sizes if name == "this" else [n for n in sizes if n in peer_sizes]:
            path = args.dir / f"w{size}-{args.questions}q-{args.spacing:g}s{suffix}.duckdb"
            if not path.exists():
                print(f"building {path.name} ...", flush=True)
                print(f"  built in {build(path, size, template, args.spacing):.1f} s", flush=True)
            if name == "this":
                up_to_date(path)
            shapes[(name, size)] = (path, shape(path))
            s = shapes[(name, size)][1]
            print(f"{name}: {size} runs x {s['questions']} questions: {s['hits']:,} hits rows "
                  f"({s['hits'] / len(s['runs']):,.0f} per run; {s['stored']:,} stored), {s['bytes'] / 2**30:.2f} GiB",
                  flush=True)
            if name == "this":
                rows = scanned(path, s["runs"][0])
                print("  rows scanned by the report of its oldest run: " + ", ".join(
                    f"{table} {n:,}" for table, n in sorted(rows.items()) if table in SCANNED), flush=True)

    times: dict = {}  # (version, command, size) -> [(wall, cpu)]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed.cpu_before = usage.ru_utime + usage.ru_stime  # the template runs were children too
    loads = [load()]
    for rep in range(args.repeats):
        for command in commands:
            for size in sizes:
                for name, src in versions:
                    if (name, size) not in shapes or (name == "peer" and rep >= args.peer_repeats):
                        continue
                    path, s = shapes[(name, size)]
                    wall, cpu, _ = timed(arguments(command, s["runs"]), src, path)
                    times.setdefault((name, command, size), []).append((wall, cpu))
                    print(f"  repeat {rep + 1} {name:4s} {command:8s} {size:5d} runs: {wall:7.2f} s wall "
                          f"{cpu:7.2f} s CPU (load {load():.2f})", flush=True)
                    loads.append(load())
    print()
    print(f"load average (1 min) seen: {min(loads):.2f}-{max(loads):.2f}; {args.repeats} repeats, each command a fresh "
          "process")
    for name, _ in versions:
        print(f"\n{name} ({dict(versions)[name]}):")
        print(f"{'command':8s} {'runs':>5s} {'wall min/median/max s':>24s} {'CPU median s':>12s} "
              f"{'per run read: wall s':>21s} {'CPU s':>7s} {'x smallest':>10s}")
        for command in commands:
            base = None
            for size in sizes:
                got = times.get((name, command, size))
                if not got:
                    continue
                walls = sorted(w for w, _ in got)
                cpu = statistics.median(c for _, c in got)
                reads = READS[command] or size
                med = statistics.median(walls)
                base = base or (med, size)
                print(f"{command:8s} {size:5d} {walls[0]:7.2f} / {med:7.2f} / {walls[-1]:7.2f} {cpu:12.2f} "
                      f"{med / reads:21.4f} {cpu / reads:7.4f} {med / base[0]:9.2f}x")
    if args.src:
        print("\nthis / peer, median wall (CPU):")
        for command in commands:
            for size in sizes:
                mine, peer = times.get(("this", command, size)), times.get(("peer", command, size))
                if mine and peer:
                    w = statistics.median(x for x, _ in mine) / statistics.median(x for x, _ in peer)
                    c = statistics.median(x for _, x in mine) / statistics.median(x for _, x in peer)
                    print(f"  {command:8s} {size:5d} runs: {w:.3f}x ({c:.3f}x CPU)")


if __name__ == "__main__":
    main()
