"""`assay rescore RUN --judgments FILE`: evaluate a stored retrieval again against other judgments.

Every stored hit carries its chunk's document and character span, and the
warehouse holds the corpus text, so corrected or extended judgments resolve
against the same documents and score the same ranked lists without retrieving
again. The result is stored as a new run of kind 'rescore' linked to the source
run (``source_run_id``), with the source's hits, stages and latencies, so every
report, comparison and export works on it unchanged.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from pathlib import Path

from assay.corpus import Corpus, Document
from assay.errors import AssayError
from assay.hashing import canonical_json, config_hash
from assay.judgments import load_judgments, resolve_gold


def stored_corpus(warehouse, corpus_hash: str) -> Corpus:
    rows = warehouse.con.execute(
        "SELECT doc_id, text, byte_size, sha256 FROM documents WHERE corpus_hash = ? ORDER BY doc_id",
        [corpus_hash]).fetchall()
    return Corpus(Path(f"warehouse:corpus/{corpus_hash[:12]}"), corpus_hash,
                  tuple(Document(d, t, b, s) for d, t, b, s in rows))


def rescore(warehouse, run_ref: str, judgments_path) -> dict:
    source = warehouse.resolve_run_id(run_ref)
    (corpus_hash, config, old_jh), = warehouse.con.execute(
        "SELECT corpus_hash, config, judgments_hash FROM complete_runs WHERE run_id = ?", [source]).fetchall()
    judgments = load_judgments(judgments_path)
    corpus = stored_corpus(warehouse, corpus_hash)
    gold = resolve_gold(judgments, corpus)
    asked = {q for q, in warehouse.con.execute("SELECT query_id FROM run_queries WHERE run_id = ?",
                                               [source]).fetchall()}
    new = sorted(j.query_id for j in judgments.judgments if j.query_id not in asked)
    if new:
        shown = ", ".join(new[:10]) + (" ..." if len(new) > 10 else "")
        raise AssayError(f"{judgments_path}: {len(new)} question(s) were never asked in run {source} ({shown}); "
                         "rescoring reuses stored hits, so new questions need a new run (`assay run`)")
    keep = [j.query_id for j in judgments.judgments]
    config = json.loads(config)
    config["rescore_of"] = source
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    run_id = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    import pyarrow as pa

    with warehouse.transaction():
        warehouse.write_judgments(judgments, corpus_hash, gold)
        warehouse.con.execute(
            "INSERT INTO runs (run_id, started_at, finished_at, status, pipeline, config, config_hash, corpus_hash, "
            "judgments_hash, chunk_set, assay_version, versions, git_commit, seed, tie_break, stats, kind, "
            "source_run_id) SELECT ?, ?, ?, status, pipeline, ?, ?, corpus_hash, ?, chunk_set, assay_version, "
            "versions, git_commit, seed, tie_break, stats, 'rescore', run_id FROM runs WHERE run_id = ?",
            [run_id, now, now, canonical_json(config), config_hash(config), judgments.sha256, source])
        warehouse.con.register("_assay_keep", pa.table({"query_id": keep}))
        try:
            for table, cols in (("run_queries", "query_id, latency_ms, n_results"),
                                ("hits", "query_id, stage, rank, chunk_id, doc_id, score"),
                                ("stage_latency", "query_id, stage, latency_ms")):
                warehouse.con.execute(
                    f"INSERT INTO {table} (run_id, {cols}) SELECT ?, {cols} FROM {table} "
                    f"WHERE run_id = ? AND query_id IN (SELECT query_id FROM _assay_keep)", [run_id, source])
        finally:
            warehouse.con.unregister("_assay_keep")
        warehouse.con.execute("INSERT INTO run_stages (run_id, stage, position) SELECT ?, stage, position "
                              "FROM run_stages WHERE run_id = ?", [run_id, source])
    return {"run_id": run_id, "source_run_id": source, "judgments_hash": judgments.sha256,
            "previous_judgments_hash": old_jh, "questions": len(keep)}
