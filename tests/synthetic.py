"""Synthetic runs written straight into a real warehouse, for checking metrics against pytrec_eval."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from assay.inputs.chunking import Chunk
from assay.inputs.corpus import Corpus, Document
from assay.core.hashing import config_hash
from assay.inputs.judgments.model import GoldEntry, GoldSpan, Judgment, JudgmentSet
from assay.retrieval import TIE_BREAK
from assay.runs.runner import RunRecord, dependency_versions
from assay.runs.sinks import store_run

DOC_LEN = 1000


@dataclass
class QuerySpec:
    query_id: str
    gold: list[tuple[str, int, int, int]]  # (doc_id, start, end, grade); start=None for a whole document
    ranking: list[str]  # chunk ids, best first
    category: str = "normal"


@dataclass
class Synthetic:
    docs: list[str]
    chunks: list[Chunk]
    queries: list[QuerySpec] = field(default_factory=list)


def random_synthetic(rng: random.Random, n_queries: int = 40) -> Synthetic:
    docs = [f"d{i}.md" for i in range(6)]
    chunks, seen = [], set()
    for d in docs:
        for _ in range(rng.randint(2, 8)):
            s = rng.randrange(0, DOC_LEN - 10)
            e = min(DOC_LEN, s + rng.randint(5, 300))
            if (d, s, e) not in seen:
                seen.add((d, s, e))
                chunks.append(Chunk(d, len(chunks), s, e, "x" * (e - s)))
    syn = Synthetic(docs, chunks)
    for qi in range(n_queries):
        gold = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            d = rng.choice(docs)
            if rng.random() < 0.15:
                gold.append((d, None, None, rng.randint(1, 3)))
            else:
                s = rng.randrange(0, DOC_LEN - 5)
                gold.append((d, s, min(DOC_LEN, s + rng.randint(3, 60)), rng.randint(1, 3)))
        depth = rng.choice([0, 1, 3, 5, 10, 15, 25])
        ranking = [c.chunk_id for c in rng.sample(chunks, min(depth, len(chunks)))]
        syn.queries.append(QuerySpec(f"q{qi:03d}", gold, ranking))
    return syn


def write_synthetic(wh, syn: Synthetic, run_id: str = "synthetic-run", stage: str = "final",
                    stages: dict | None = None, texts: dict | None = None) -> RunRecord:
    """Write the run. ``stages`` ({query_id: {stage: [chunk ids]}}) records several stages instead of one;
    ``texts`` ({doc_id: text of DOC_LEN characters}) gives the documents words (default: 'xxx...')."""
    documents = tuple(Document(d, (texts or {}).get(d, "x" * DOC_LEN), DOC_LEN, "0" * 64) for d in syn.docs)
    corpus = Corpus(Path("synthetic"), "c" * 64, documents)
    judgments, gold = [], []
    for q in syn.queries:
        entries = tuple(GoldEntry(d, None if s is None else f"quote {i}", g) for i, (d, s, e, g) in enumerate(q.gold))
        judgments.append(Judgment(q.query_id, f"question {q.query_id}", q.category, "match", "normal",
                                  entries, None, None, 1))
        for i, (d, s, e, g) in enumerate(q.gold):
            gold.append(GoldSpan(q.query_id, i, d, None if s is None else f"quote {i}", g,
                                 0 if s is None else s, DOC_LEN if s is None else e))
    jset = JudgmentSet(Path("synthetic.jsonl"), "j" * 64, tuple(judgments))
    by_id = {c.chunk_id: c for c in syn.chunks}
    hits, query_rows = [], []
    stage_names = [stage]
    for q in syn.queries:
        lists = stages[q.query_id] if stages else {stage: q.ranking}
        stage_names = list(lists)
        query_rows.append((q.query_id, 0.0, len(lists.get("final", q.ranking))))
        for name, ranking in lists.items():
            for rank, cid in enumerate(ranking, 1):
                hits.append((q.query_id, name, rank, cid, by_id[cid].doc_id, float(len(ranking) - rank)))
    config = {"pipeline": "synthetic", "chunker": {"name": "synthetic"}, "seed": 0, "tie_break": TIE_BREAK,
              "bootstrap_samples": 200, "depth": 100, "doc_depth": 10}
    record = RunRecord(run_id=run_id, started_at=datetime(2026, 1, 1), finished_at=datetime(2026, 1, 1),
                       config=config, config_hash=config_hash(config), corpus=corpus, chunk_set="s" * 64,
                       chunks=syn.chunks, judgments=jset, gold=gold, query_rows=query_rows, hits=hits,
                       versions=dependency_versions(), git_commit=None, stages=stage_names)
    if hasattr(wh, "hold"):  # a stand-in keeping the record for a test to change before it stores it
        wh.hold(record)
    else:
        store_run(wh, record)  # as a run is stored: its rows and its measure values
    return record
