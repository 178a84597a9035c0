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

from assay.core.errors import AssayError
from assay.inputs.judgments import load_judgments, resolve_gold
from assay.store.collections import corpus_by_hash


def rescore(warehouse, run_ref: str, judgments_path) -> dict:
    source = warehouse.resolve_run_id(run_ref)
    (corpus_hash, config, old_jh), = warehouse.con.execute(
        "SELECT corpus_hash, config, judgments_hash FROM complete_runs WHERE run_id = ?", [source]).fetchall()
    judgments = load_judgments(judgments_path)
    corpus = corpus_by_hash(warehouse, corpus_hash)
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
    from assay.measures.values import score_run

    with warehouse.transaction():
        warehouse.write_judgments(judgments, corpus_hash, gold)
        run_id = warehouse.derive_run(source, "rescore", config, judgments.sha256,
                                      ("run_queries", "hits", "stage_latency", "run_stages"), keep=keep)
        score_run(warehouse, run_id)  # against its own judgments, never copied from the source
    from assay.store.snapshot import refresh

    refresh(warehouse)
    return {"run_id": run_id, "source_run_id": source, "judgments_hash": judgments.sha256,
            "previous_judgments_hash": old_jh, "questions": len(keep)}
