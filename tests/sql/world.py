"""A warehouse holding more than one of everything the measure SQL must tell apart, so that a join or a
filter on the wrong key shows: two complete runs over the same corpus and judgments, two stages in one of
them, gold spans and questions stored under other judgments and corpus hashes, questions without an
answer, and chunks that touch a gold span exactly at its edges. Built once per test module
(tools/mutate_sql.py runs these tests once per mutant)."""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
from pathlib import Path

from assay.inputs.chunking import Chunk
from synthetic import DOC_LEN, QuerySpec, Synthetic, random_synthetic, write_synthetic

JUDGMENTS, CORPUS = "j" * 64, "c" * 64  # what write_synthetic stores
OTHER_JUDGMENTS, OTHER_CORPUS = "k" * 64, "d" * 64


def opened(tmp_path_factory, name: str, write):
    """A fresh warehouse that ``write(wh)`` has filled. tools/mutate_sql.py sets ASSAY_MUTATION_SNAPSHOTS for a
    mutant of SQL that runs at query time (a measure, never a migration: the views live in the warehouse): the
    filled file is then copied from one its unmutated baseline saved there (ASSAY_MUTATION_SNAPSHOTS_WRITE),
    which saves a mutant the seconds of writing the runs. Unset (every ordinary test run), it is written here."""
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp(name) / "wh.duckdb"
    folder = os.environ.get("ASSAY_MUTATION_SNAPSHOTS")
    saved = Path(folder) / f"{name}.duckdb" if folder else None
    if saved is not None and saved.exists():
        shutil.copyfile(saved, path)
        return Warehouse.open(path)
    wh = Warehouse.open(path)
    write(wh)
    if saved is not None and os.environ.get("ASSAY_MUTATION_SNAPSHOTS_WRITE"):
        wh.close()  # checkpointed: the file alone holds everything
        part = saved.with_name(f"{saved.name}.{os.getpid()}.part")
        shutil.copyfile(path, part)
        os.replace(part, saved)  # whole or absent, for baselines that run side by side
        wh = Warehouse.open(path)
    return wh


def pytrec_reference():
    """tests/measures/test_pytrec_parity.py, whose functions turn a synthetic question into pytrec_eval's
    qrels and run (the project's independent oracle), loaded by path: tests/measures is not a package."""
    path = Path(__file__).parents[1] / "measures" / "test_pytrec_parity.py"
    spec = importlib.util.spec_from_file_location("pytrec_parity_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _edge_queries(syn: Synthetic) -> None:
    """Chunks ending where a gold span starts and starting where it ends (no overlap: spans are half-open),
    one a character inside it, grades that tie and differ, a relevant chunk at exactly rank 1, 3, 5 and 10."""
    c = lambda d, s, e: Chunk(d, len(syn.chunks), s, e, "x" * (e - s))  # noqa: E731
    added = {}
    for d, s, e in (("a.md", 0, 100), ("a.md", 110, 200), ("a.md", 105, 106), ("a.md", 99, 100),
                    ("a.md", 110, 111), ("b.md", 0, 50), ("b.md", 50, 60), ("b.md", 300, 400)):
        ch = c(d, s, e)
        syn.chunks.append(ch)
        added[(d, s, e)] = ch.chunk_id
    syn.docs += ["a.md", "b.md"]
    fill = [ch.chunk_id for ch in syn.chunks if ch.doc_id not in ("a.md", "b.md")][:9]
    at = lambda rank, cid: fill[:rank - 1] + [cid] + fill[rank - 1:]  # noqa: E731
    gold = [("a.md", 100, 110, 2)]
    syn.queries += [
        QuerySpec("edge-touch", gold, [added[("a.md", 0, 100)], added[("a.md", 110, 200)], added[("a.md", 105, 106)]]),
        QuerySpec("edge-inside", gold, [added[("a.md", 99, 100)], added[("a.md", 110, 111)]]),
        QuerySpec("edge-grades", [("b.md", 10, 20, 1), ("b.md", 55, 58, 3), ("b.md", 320, 330, 1)],
                  [added[("b.md", 0, 50)], added[("b.md", 300, 400)], added[("b.md", 50, 60)]]),
        QuerySpec("edge-ties", [("b.md", 10, 20, 2), ("b.md", 30, 40, 2)], [added[("b.md", 0, 50)]]),
        *(QuerySpec(f"edge-rank{r}", [("b.md", 350, 360, 1)], at(r, added[("b.md", 300, 400)])) for r in (1, 3, 5, 10)),
        QuerySpec("edge-none", gold, []),
        QuerySpec("unanswerable", [], [added[("a.md", 105, 106)]], category="no_answer"),
    ]


def lists(seed: int = 11) -> dict[tuple[str, str], Synthetic]:
    """(run, stage) -> the questions with that list's ranking. The main run's 'retrieval' stage and the decoy
    run rank the same chunks in other orders."""
    rng = random.Random(seed)
    syn = random_synthetic(rng, n_queries=30)
    _edge_queries(syn)
    retrieval, decoy = [], []
    for q in syn.queries:
        retrieval.append(QuerySpec(q.query_id, q.gold, list(reversed(q.ranking))[:max(1, len(q.ranking) - 1)],
                                   q.category))
        shuffled = list(q.ranking)
        rng.shuffle(shuffled)
        decoy.append(QuerySpec(q.query_id, q.gold, shuffled[1:] + shuffled[:1], q.category))
    return {("main", "final"): syn, ("main", "retrieval"): Synthetic(syn.docs, syn.chunks, retrieval),
            ("decoy", "final"): Synthetic(syn.docs, syn.chunks, decoy)}


def write(wh, lists: dict[tuple[str, str], Synthetic]) -> None:
    syn, retrieval = lists[("main", "final")], lists[("main", "retrieval")]
    stages = {q.query_id: {"final": q.ranking, "retrieval": r.ranking} for q, r in zip(syn.queries, retrieval.queries)}
    write_synthetic(wh, syn, run_id="main", stages=stages)
    write_synthetic(wh, lists[("decoy", "final")], run_id="decoy")
    _decoy_judgments(wh, syn)


def _decoy_judgments(wh, syn: Synthetic) -> None:
    """Gold under another judgments hash and another corpus hash, covering every document with grade 3, and the
    same questions under another judgments hash marked no_answer: no complete run reads them."""
    queries, docs = [q.query_id for q in syn.queries], sorted(set(syn.docs))
    for judgments, corpus in ((OTHER_JUDGMENTS, CORPUS), (JUDGMENTS, OTHER_CORPUS)):
        wh.con.execute("INSERT INTO gold_spans SELECT ?, ?, q, ROW_NUMBER() OVER (PARTITION BY q ORDER BY d) - 1, d, "
                       "NULL, 3, 0, ? FROM (SELECT UNNEST(?) AS q) CROSS JOIN (SELECT UNNEST(?) AS d)",
                       [judgments, corpus, DOC_LEN, queries, docs])
    wh.con.execute("INSERT INTO queries (judgments_hash, query_id, query_text, category, form, hard_class, line) "
                   "SELECT ?, q, 'decoy', 'no_answer', 'match', 'normal', 1 FROM (SELECT UNNEST(?) AS q)",
                   [OTHER_JUDGMENTS, queries])
