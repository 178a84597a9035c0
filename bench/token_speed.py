"""The token tables budgets read: write_tokens before migration 015 against now, side by side in one process, and
the first `assay run` of a corpus (which writes them) against the second (which finds them), before and now.

Part 1, in this process: a warehouse holding a corpus and its document-chunker chunks (made once by `assay import
beir` and `assay run --chunker document`, its token rows then deleted) is copied for every timing. "before" is
write_tokens as it was before migration 015 (below, verbatim but for its name and imports) writing into the tables
as schema 014 made them, with their primary keys; "now" is assay.store.tokens.write_tokens into the tables of this
checkout's schema. Each writes doc_tokens and chunk_tokens in one transaction, committed and checkpointed; the rows
are checked equal. Also timed: the tokenizer's own offsets (what "before" tokenized with) against
budget.piece_offsets (what "now" uses), and the chunk_tokens SQL for chunk sets of whole documents and of
1,000- and 200-character pieces. CPU is the process's (process_time: every thread, DuckDB's included), wall is
perf_counter; each repeat runs the two in alternating order; printed: min / median / max and the ratio of medians,
with the load average before and after.

Part 2, one process per command as a user runs them: in a fresh project, `assay import beir`, then `assay run
--corpus @NAME --judgments @NAME/test --chunker document` twice, with the code of --old (default: the commit before
migration 015, taken with `git archive`) and with this checkout's, alternating; CPU is the command's user + system
time (RUSAGE_CHILDREN). The first run's CPU less the second's is what writing the token tables cost.

The corpus is SciFact from ../shared/collections/scifact. Without it part 1 runs on a generated corpus (5,000
documents of words, a tenth of them with accented or CJK words) and part 2 is skipped: its figures are SciFact's.

Run: .venv/bin/python bench/token_speed.py [--repeats 3] [--dir /tmp/assay-token-speed] [--old REV] [--only 1|2]
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
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact"
MIGRATION = "sql/migrations/015_token_tables_without_keys.sql"

# The token tables as migration 010 made them (and schema 014 still had them).
SCHEMA_014 = """
CREATE TABLE doc_tokens (
    tokenizer_id  VARCHAR NOT NULL,
    corpus_hash   VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    tok_idx       INTEGER NOT NULL,
    start_char    INTEGER NOT NULL,
    end_char      INTEGER NOT NULL,
    PRIMARY KEY (tokenizer_id, corpus_hash, doc_id, tok_idx)
);
CREATE TABLE chunk_tokens (
    tokenizer_id  VARCHAR NOT NULL,
    chunk_set     VARCHAR NOT NULL,
    chunk_id      VARCHAR NOT NULL,
    first_tok     INTEGER NOT NULL,
    n_tokens      INTEGER NOT NULL,
    PRIMARY KEY (tokenizer_id, chunk_set, chunk_id)
);
"""


def write_tokens_before(warehouse, corpus_hash: str, chunk_set: str) -> str:
    """write_tokens as it was before migration 015 (commit 12da6cf), verbatim but for its name and imports."""
    from assay.store.tokens import TOKENIZER_NAME, token_spans, tokenizer_id
    from assay.store.rows import registered
    from assay.core.sqlfiles import load_sql

    tid, con = tokenizer_id(), warehouse.con
    if not con.execute("SELECT COUNT(*) FROM tokenizers WHERE tokenizer_id = ?", [tid]).fetchall()[0][0]:
        con.execute("INSERT INTO tokenizers VALUES (?, ?, CAST(current_timestamp AS TIMESTAMP))", [tid, TOKENIZER_NAME])
    have_docs = con.execute("SELECT COUNT(*) FROM doc_tokens WHERE tokenizer_id = ? AND corpus_hash = ?",
                            [tid, corpus_hash]).fetchall()[0][0]
    if not have_docs:
        docs = con.execute("SELECT doc_id, text FROM documents WHERE corpus_hash = ? ORDER BY doc_id",
                           [corpus_hash]).fetchall()
        for i in range(0, len(docs), 2000):  # bounded memory on large corpora
            batch = docs[i:i + 2000]
            spans = token_spans([text for _, text in batch])
            doc_ids, idx, starts, ends = [], [], [], []
            for (doc_id, _), offsets in zip(batch, spans):
                doc_ids += [doc_id] * len(offsets)
                idx += range(len(offsets))
                starts += [s for s, _ in offsets]
                ends += [e for _, e in offsets]
            table = {"tokenizer_id": [tid] * len(idx), "corpus_hash": [corpus_hash] * len(idx), "doc_id": doc_ids,
                     "tok_idx": idx, "start_char": starts, "end_char": ends}
            with registered(con, "_assay_tokens", table):
                con.execute("INSERT INTO doc_tokens SELECT * FROM _assay_tokens")
    have_chunks = con.execute("SELECT COUNT(*) FROM chunk_tokens WHERE tokenizer_id = ? AND chunk_set = ?",
                              [tid, chunk_set]).fetchall()[0][0]
    if not have_chunks:
        con.execute(load_sql("budget/chunk_tokens"), {"tokenizer_id": tid, "corpus_hash": corpus_hash,
                                                       "chunk_set": chunk_set})
    return tid


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def generated(target: Path, n_docs: int = 5000, seed: int = 0) -> Path:
    """A BEIR-format collection of word documents (a tenth with accented or CJK words) and 50 test questions."""
    rng = random.Random(seed)
    vocab = [("".join(rng.choice("etaoinshrdlucmfwypvbgkqjxz") for _ in range(rng.randint(1, 12))))
             for _ in range(20000)] + ["naïve", "café", "Zürich", "東京", "β-catenin", "±5%", "Σ"]
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "corpus.jsonl", "w", encoding="utf-8") as out:
        for i in range(n_docs):
            words = [vocab[min(int(rng.paretovariate(1.1)) - 1, 19999)] if rng.random() > 0.003 or i % 10
                     else rng.choice(vocab[20000:]) for _ in range(rng.randint(80, 400))]
            out.write(json.dumps({"_id": f"d{i}", "title": " ".join(words[:6]).title(),
                                  "text": " ".join(words[6:]) + "."}) + "\n")
    with open(target / "queries.jsonl", "w", encoding="utf-8") as out:
        for q in range(50):
            out.write(json.dumps({"_id": f"q{q}", "text": " ".join(rng.sample(vocab[:500], 4))}) + "\n")
    (target / "qrels").mkdir(exist_ok=True)
    (target / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{q}\td{rng.randrange(n_docs)}\t1\n" for q in range(50)))
    return target


def assay(src: Path, project: Path, *args: str) -> float:
    """CPU seconds (user + system) of one `python -m assay ARGS` in ``project`` with the code under ``src``."""
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "assay", *args], cwd=project, env=env, capture_output=True,
                          text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"assay {' '.join(args)} ({src}) failed:\n{done.stdout}{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def first_runs(src: Path, project: Path, collection: Path) -> tuple[float, float, float]:
    """CPU of import, first run, second run in a fresh project at ``project``."""
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    name = collection.name
    imported = assay(src, project, "import", "beir", str(collection), "--name", name)
    run = ("run", "--corpus", f"@{name}", "--judgments", f"@{name}/test", "--chunker", "document")
    return imported, assay(src, project, *run), assay(src, project, *run)


def template(work: Path, collection: Path) -> tuple[Path, Path, str, str]:
    """Warehouses holding the collection's documents and document chunks, no token rows: schema 014's token
    tables (with keys) and this checkout's. Returns their paths, the corpus hash and the chunk set."""
    import duckdb

    project = work / "template"
    if not (project / "warehouse" / "assay.duckdb").exists():
        first_runs(ROOT / "src", project, collection)
    made = project / "warehouse" / "assay.duckdb"
    now, before = work / "now.duckdb", work / "before.duckdb"
    for path, ddl in ((now, None), (before, SCHEMA_014)):
        shutil.copy(made, path)
        con = duckdb.connect(str(path))
        if ddl:
            con.execute("DROP TABLE doc_tokens; DROP TABLE chunk_tokens;" + ddl)
        else:
            con.execute("DELETE FROM doc_tokens; DELETE FROM chunk_tokens")
        con.execute("UPDATE runs SET tokenizer_id = NULL")
        corpus_hash, chunk_set = con.execute("SELECT corpus_hash, chunk_set FROM runs LIMIT 1").fetchall()[0]
        con.execute("CHECKPOINT")
        con.close()
    return before, now, corpus_hash, chunk_set


def timed(fn) -> tuple[float, float, object]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, out


def write_once(source: Path, work: Path, writer, corpus_hash: str, chunk_set: str):
    import duckdb

    from assay.store.warehouse import Warehouse

    path = work / f"timed-{source.name}"
    shutil.copy(source, path)
    wh = Warehouse(path, duckdb.connect(str(path)), read_only=False)  # as it is: no migration

    def write():
        with wh.transaction():
            writer(wh, corpus_hash, chunk_set)
        wh.con.execute("CHECKPOINT")

    try:
        cpu, wall, _ = timed(write)
        rows = [wh.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("doc_tokens", "chunk_tokens")]
    finally:
        wh.close()
    size = path.stat().st_size
    path.unlink()
    return cpu, wall, rows, size


def part1(work: Path, collection: Path, repeats: int) -> None:
    import duckdb

    from assay.store import tokens as budget

    before, now, corpus_hash, chunk_set = template(work, collection)
    print(f"part 1: write_tokens, {collection} (load before: {load()})")
    times = {"before": ([], []), "now": ([], [])}
    sizes = {}
    for r in range(repeats):
        order = [("before", before, write_tokens_before), ("now", now, budget.write_tokens)]
        rows = {}
        for label, source, writer in (order if r % 2 == 0 else order[::-1]):
            cpu, wall, rows[label], sizes[label] = write_once(source, work, writer, corpus_hash, chunk_set)
            times[label][0].append(cpu)
            times[label][1].append(wall)
        assert rows["before"] == rows["now"], "the two wrote different token rows"
    n_pieces, n_chunks = len(rows["now"][0]), len(rows["now"][1])
    print(f"  {n_pieces:,} pieces, {n_chunks:,} chunks; rows identical in every repeat")
    for label in ("before", "now"):
        print(f"  write_tokens {label:6s} CPU s {spread(times[label][0])}  wall s {spread(times[label][1])}  "
              f"file {sizes[label] / 1e6:.1f} MB")
    for i, what in enumerate(("CPU", "wall")):
        print(f"  ratio now/before ({what}, medians): "
              f"{statistics.median(times['now'][i]) / statistics.median(times['before'][i]):.3f}")

    con = duckdb.connect(str(now), read_only=True)
    texts = [t for t, in con.execute("SELECT text FROM documents WHERE corpus_hash = ? ORDER BY doc_id",
                                     [corpus_hash]).fetchall()]
    con.close()
    tok = {"tokenizer offsets": ([], []), "piece_offsets": ([], [])}
    for r in range(repeats):
        pair = [("tokenizer offsets", lambda: budget.token_spans(texts)),
                ("piece_offsets", lambda: budget.piece_offsets(texts))]
        for label, fn in (pair if r % 2 == 0 else pair[::-1]):
            cpu, wall, _ = timed(fn)
            tok[label][0].append(cpu)
            tok[label][1].append(wall)
    for label, (cpu, wall) in tok.items():
        print(f"  {label:18s} CPU s {spread(cpu)}  wall s {spread(wall)}")
    print(f"  ratio piece_offsets/tokenizer (CPU, medians): "
          f"{statistics.median(tok['piece_offsets'][0]) / statistics.median(tok['tokenizer offsets'][0]):.3f}")

    # the chunk_tokens SQL (a range join of chunks against doc_tokens) for chunk sets of several sizes
    from assay.core.sqlfiles import load_sql
    from assay.store.warehouse import Warehouse

    path = work / "chunks.duckdb"
    shutil.copy(now, path)
    wh = Warehouse(path, duckdb.connect(str(path)), read_only=False)
    with wh.transaction():
        budget.write_tokens(wh, corpus_hash, chunk_set)
    for size in (None, 1000, 200):
        name = f"bench-{size or 'document'}"
        step = "length(text)" if size is None else str(size)
        wh.con.execute(f"INSERT INTO chunks SELECT '{name}', doc_id || '#' || s, doc_id, s // {step}, s, "
                       f"least(s + {step} + 50, length(text)), '', '' FROM documents, "
                       f"range(0, length(text), greatest({step}, 1)) r(s) WHERE corpus_hash = ?", [corpus_hash])
        n = wh.con.execute("SELECT COUNT(*) FROM chunks WHERE chunk_set = ?", [name]).fetchall()[0][0]
        cpus, walls = [], []
        for _ in range(repeats):
            wh.con.execute("DELETE FROM chunk_tokens WHERE chunk_set = ?", [name])
            cpu, wall, _ = timed(lambda: wh.con.execute(load_sql("budget/chunk_tokens"), {
                "tokenizer_id": budget.tokenizer_id(), "corpus_hash": corpus_hash, "chunk_set": name}))
            cpus.append(cpu)
            walls.append(wall)
        print(f"  chunk_tokens SQL, {n:,} chunks of {f'{size} characters' if size else 'whole documents'}"
              f"{' (+50 overlap)' if size else ''}: CPU s {spread(cpus)}  wall s {spread(walls)}")
    wh.close()
    path.unlink()
    print(f"  load after: {load()}")


def part2(work: Path, old: str, repeats: int) -> None:
    if not SCIFACT.exists():
        print(f"part 2 skipped: SciFact is not at {SCIFACT} (../shared is absent); its figures are SciFact's")
        return
    tree = work / f"old-{old}"
    if not tree.exists():
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", old], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    print(f"part 2: `assay run --chunker document` on SciFact, first and second run, CPU s (load before: {load()})")
    got = {"before": [], "now": []}
    for r in range(repeats):
        pair = [("before", tree / "src"), ("now", ROOT / "src")]
        for label, src in (pair if r % 2 == 0 else pair[::-1]):
            got[label].append(first_runs(src, work / f"project-{label}", SCIFACT))
    for label in ("before", "now"):
        imports, firsts, seconds = zip(*got[label])
        print(f"  {label:6s} import {spread(list(imports))}  first run {spread(list(firsts))}  "
              f"second run {spread(list(seconds))}  first - second {spread([f - s for f, s in zip(firsts, seconds)])}")
    firsts = {k: statistics.median([g[1] for g in v]) for k, v in got.items()}
    print(f"  first run now/before (CPU, medians): {firsts['now'] / firsts['before']:.3f}")
    print(f"  load after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/assay-token-speed")
    parser.add_argument("--old", default=None, help="the code compared in part 2 (default: the commit before "
                                                     f"{MIGRATION} was added)")
    parser.add_argument("--only", choices=("1", "2"), default=None)
    args = parser.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    collection = SCIFACT if SCIFACT.exists() else generated(work / "generated")
    if args.only != "2":
        part1(work, collection, args.repeats)
    if args.only != "1":
        old = args.old or subprocess.run(
            ["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H^", "--", MIGRATION],
            capture_output=True, text=True, check=True).stdout.split()[-1]
        part2(work, old, args.repeats)


if __name__ == "__main__":
    main()
