"""`assay runs` and `assay lake runs`: every stored run, newest first, with what kind of run it is and
what it used (chunker, calibration, answer stage, corpus and judgments), as a table, JSON or CSV.

A warehouse and a lake answer the same ``reports/runs`` query, so both listings have the same columns.
"""

from __future__ import annotations

import csv
import io
import json

from assay.core import jsonout

FORMATS = ("table", "json", "csv")
# runs.kind as stored -> as listed
KINDS = {"retrieval": "run", "rescore": "rescore", "revalidate": "revalidation"}
FIELDS = ("run_id", "names", "started_at", "status", "kind", "source_run_id", "pipeline", "chunker", "n_questions",
          "calibration_id", "generator", "corpus_hash", "judgments_hash")
HASH_PREFIX = 8  # the table shows this much of the corpus and judgments hashes; JSON and CSV give them whole


def list_runs(source) -> list[dict]:
    """One dict per run (keys ``FIELDS``), newest first, from a warehouse or a lake (anything with
    ``query(name)``). ``names``: the names given to it (`assay tag`), a list. ``started_at`` is ISO 8601 to the second (as in a report's JSON); ``calibration_id`` and ``generator``
    are None when the run applied no calibration or had no answer stage."""
    from assay.inputs.chunking import chunker_label
    from assay.store.run_refs import names_by_run

    _, rows = source.query("reports/runs")
    names = names_by_run(source)
    out = []
    for run_id, started, pipeline, config, corpus_hash, judgments_hash, n, status, kind, source_run_id in rows:
        config = json.loads(config)
        calibration = config.get("calibration") or {}
        generator = (config.get("retrieval") or {}).get("generator") or {}
        out.append({"run_id": run_id, "names": names.get(run_id, []), "started_at": started.isoformat(timespec="seconds"),
                    "status": status, "kind": KINDS.get(kind or "retrieval", kind), "source_run_id": source_run_id,
                    "pipeline": pipeline, "chunker": chunker_label(config["chunker"]), "n_questions": n,
                    "calibration_id": calibration.get("calibration_id"), "generator": generator.get("name"),
                    "corpus_hash": corpus_hash, "judgments_hash": judgments_hash})
    return out


def render(runs: list[dict], fmt: str) -> str:
    if fmt == "json":
        return jsonout.dumps(runs, indent=2) + "\n"
    from assay.core.escape import printed_csv_cell

    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: printed_csv_cell(" ".join(r[k]) if k == "names" else r[k]) for k in FIELDS} for r in runs)
        return buf.getvalue()
    if not runs:
        return "no runs yet\n"
    from assay.core.tables import render as grid

    rows = [[r["run_id"], r["started_at"].replace("T", " "), r["status"] if r["status"] == "complete" else r["status"].upper(),
             r["kind"], r["source_run_id"] or "-", r["pipeline"], r["chunker"], r["n_questions"],
             r["calibration_id"] or "-", r["generator"] or "-", r["corpus_hash"][:HASH_PREFIX],
             r["judgments_hash"][:HASH_PREFIX]] for r in runs]
    named = any(r["names"] for r in runs)  # the column only where a run has a name
    if named:
        rows = [[row[0], ", ".join(r["names"]) or "-", *row[1:]] for row, r in zip(rows, runs)]
    table = grid(["run"] + ["name"] * named + ["started", "status", "kind", "of run", "pipeline", "chunker",
                                                "questions", "calibration", "answer stage", "corpus", "judgments"],
                 rows, align=[None] * (7 + named) + ["right"] + ["left"] * 4)
    flagged = sorted({r["status"] for r in runs if r["status"] != "complete"})
    if flagged:
        table += (f"\n{' and '.join(s.upper() for s in flagged)}: stored for inspection (`assay answers show "
                  "RUN_ID`), not used by reports")
    return table + "\n"
