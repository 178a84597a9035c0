"""Exports of stored runs for BI tools (Parquet, CSV, JSON lines) and for trec_eval (TREC run and qrels files).

Every export is written into a temporary sibling of the output directory and renamed into place
at the end, so a failure leaves nothing behind. An existing non-empty directory is never written
into. ``manifest.json`` lists every file with its table, format and row count. The exported
columns are documented in docs/exports.md (a test keeps that page and ``TABLES`` in step).
"""

from __future__ import annotations

import csv
import json
import secrets
import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from assay import __version__
from assay.core import jsonout
from assay.core.errors import ConfigError, ExportError
from assay.core.escape import csv_cell
from assay.measures.compute import evaluate, per_query, question_labels, question_of
from assay.measures import fill
from assay.measures.registry import DEFAULT_MEASURES

FORMATS = ("parquet", "csv", "json", "trec")
MANIFEST = "manifest.json"
# Same default as the report, for runs stored before the configuration recorded it.
DEFAULT_BOOTSTRAP_SAMPLES = 1000

# Whether a row's context budget was filled (metrics.fill.FIELDS, in order); NULL for a measure without one.
FILL_COLUMNS = tuple(zip(fill.FIELDS, ("BOOLEAN", "DOUBLE", "DOUBLE", "INTEGER")))

# Every exported table, its columns in order and their SQL types. Tables with a file in
# sql/exports/ come from that query; the metric tables are computed (see COMPUTED).
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": (
        ("run_id", "VARCHAR"), ("started_at", "TIMESTAMP"), ("finished_at", "TIMESTAMP"), ("pipeline", "VARCHAR"),
        ("config", "VARCHAR"), ("config_hash", "VARCHAR"), ("corpus_hash", "VARCHAR"),
        ("judgments_hash", "VARCHAR"), ("chunk_set", "VARCHAR"), ("assay_version", "VARCHAR"),
        ("git_commit", "VARCHAR"), ("seed", "INTEGER"), ("tie_break", "VARCHAR"), ("stats", "VARCHAR"),
        ("status", "VARCHAR"), ("kind", "VARCHAR"), ("source_run_id", "VARCHAR"),
    ),
    "questions": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("query_text", "VARCHAR"), ("category", "VARCHAR"),
        ("form", "VARCHAR"), ("hard_class", "VARCHAR"), ("unanswerable", "VARCHAR"), ("answerable", "BOOLEAN"),
        ("n_results", "INTEGER"), ("latency_ms", "DOUBLE"),
    ),
    "hits": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("stage", "VARCHAR"), ("rank", "INTEGER"),
        ("chunk_id", "VARCHAR"), ("doc_id", "VARCHAR"), ("score", "DOUBLE"), ("start_char", "INTEGER"),
        ("end_char", "INTEGER"), ("relevance", "INTEGER"), ("grade", "INTEGER"),
    ),
    "gold_spans": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("gold_idx", "INTEGER"), ("doc_id", "VARCHAR"),
        ("start_char", "INTEGER"), ("end_char", "INTEGER"), ("grade", "INTEGER"), ("quote", "VARCHAR"),
    ),
    "per_query_metrics": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("metric", "VARCHAR"), ("level", "VARCHAR"),
        ("value", "DOUBLE"), ("unit", "VARCHAR"), *FILL_COLUMNS,
    ),
    "metrics": (
        ("run_id", "VARCHAR"), ("metric", "VARCHAR"), ("level", "VARCHAR"), ("slice", "VARCHAR"),
        ("value", "DOUBLE"), ("n", "INTEGER"), ("ci_low", "DOUBLE"), ("ci_high", "DOUBLE"), *FILL_COLUMNS,
    ),
    "stage_attribution": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("in_bm25", "INTEGER"), ("in_dense", "INTEGER"),
        ("in_fusion", "INTEGER"), ("in_rerank", "INTEGER"), ("in_final", "INTEGER"), ("lost_at", "VARCHAR"),
    ),
    "answers": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("generator", "VARCHAR"), ("mode", "VARCHAR"),
        ("status", "VARCHAR"), ("refusal", "VARCHAR"), ("failure_stage", "VARCHAR"), ("claims_returned", "INTEGER"),
        ("claims_kept", "INTEGER"), ("drops", "VARCHAR"), ("repair_turns", "INTEGER"), ("http_status", "INTEGER"),
        ("finish_reason", "VARCHAR"), ("parse_errors", "VARCHAR"), ("error", "VARCHAR"),
        ("response_excerpt", "VARCHAR"), ("latency_ms", "DOUBLE"),
    ),
    "claims": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("claim_idx", "INTEGER"), ("text", "VARCHAR"),
        ("kept", "BOOLEAN"), ("reason", "VARCHAR"),
    ),
    "citations": (
        ("run_id", "VARCHAR"), ("query_id", "VARCHAR"), ("claim_idx", "INTEGER"), ("cite_idx", "INTEGER"),
        ("chunk_id", "VARCHAR"), ("quote", "VARCHAR"), ("valid", "BOOLEAN"), ("reason", "VARCHAR"),
        ("doc_id", "VARCHAR"), ("start_char", "INTEGER"), ("end_char", "INTEGER"),
    ),
}
# Tables a run that did not complete (failed, blocked: assay.store.run_status) has no rows in: it is never scored,
# as no report or gate scores it, and stage attribution is a view over complete runs.
SCORED = ("per_query_metrics", "metrics", "stage_attribution")


def columns(table: str) -> list[str]:
    return [name for name, _ in TABLES[table]]


# -- gathering -----------------------------------------------------------------------------
def _sql_rows(warehouse, name: str, table: str, run_id: str) -> list[tuple]:
    cols, rows = warehouse.query(name, run_id=run_id)
    if cols != columns(table):
        raise ExportError(f"sql/{name}.sql returns columns {cols}, but the {table!r} export declares "
                          f"{columns(table)}; update one to match the other")
    return rows


def _per_query_metrics(warehouse, run: dict, measures=DEFAULT_MEASURES) -> list[tuple]:
    """A budgeted measure's rows say whether their question filled the budget (``metrics.fill`` over that one
    question: ``questions_short`` 0 or 1); other rows hold NULL there."""
    rows, questions = [], set(question_labels(warehouse, run["run_id"]))
    tokens = fill.available(warehouse, run["run_id"]) if any(m.budget for m in measures) else {}
    for measure in measures:
        values = per_query(warehouse, run["run_id"], measure, stage="final")
        for (unit, level), value in sorted(values.items()):
            qid = question_of(unit, questions)
            fields = fill.fill(tokens, measure.budget, [qid]) if measure.budget else dict.fromkeys(fill.FIELDS)
            rows.append((run["run_id"], qid, measure.name, level, value, unit, *(fields[f] for f in fill.FIELDS)))
    return rows


def _metrics(warehouse, run: dict, measures=DEFAULT_MEASURES) -> list[tuple]:
    """Exactly what the report shows: the run's own seed and bootstrap sample count."""
    samples = json.loads(run["config"]).get("bootstrap_samples", DEFAULT_BOOTSTRAP_SAMPLES)
    rows = evaluate(warehouse, run["run_id"], measures, stage="final", seed=run["seed"], samples=samples)
    marked = fill.annotate(warehouse, run["run_id"], [{"metric": r.metric, "slice": r.slice} for r in rows])
    return [(run["run_id"], r.metric, r.level, r.slice, r.value, r.n, r.ci_low, r.ci_high,
             *(m[f] for f in fill.FIELDS)) for r, m in zip(rows, marked)]


COMPUTED = {"per_query_metrics": _per_query_metrics, "metrics": _metrics}


def table_rows(warehouse, table: str, run_id: str, measures=DEFAULT_MEASURES) -> list[tuple]:
    """One exported table's rows for one run, in the column order of ``TABLES[table]``; the metric tables
    hold ``measures`` (the standard set unless given), and nothing for a run that did not complete (``SCORED``)."""
    if table in SCORED and _run_row(warehouse, run_id)["status"] != "complete":
        return []
    if table in COMPUTED:
        return COMPUTED[table](warehouse, _run_row(warehouse, run_id), measures)
    rows = _sql_rows(warehouse, f"exports/{table}", table, run_id)
    if table == "runs":  # a run stored before URLs were redacted still holds their credentials
        at = columns("runs").index("config")
        rows = [row[:at] + (_shown_config(row[at]),) + row[at + 1:] for row in rows]
    return rows


def _shown_config(text):
    from assay.core.credentials import redact_config_urls
    from assay.core.hashing import canonical_json

    if not text:
        return text
    config = json.loads(text)
    shown = redact_config_urls(config)
    return text if shown == config else canonical_json(shown)


def _run_row(warehouse, run_id: str) -> dict:
    return dict(zip(columns("runs"), _sql_rows(warehouse, "exports/runs", "runs", run_id)[0]))


# -- table formats ---------------------------------------------------------------------------
def _arrow_schema(table: str):
    """Types every BI tool reads: never decimal128(38,0), what a DuckDB HUGEINT (a SUM of integers) arrives in
    Arrow as; an export query casts such a sum to the type its table declares (tests/present/test_export.py
    checks every file's types)."""
    import pyarrow as pa

    types = {"VARCHAR": pa.string(), "TIMESTAMP": pa.timestamp("us"), "INTEGER": pa.int32(),
             "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
    return pa.schema([(name, types[sql_type]) for name, sql_type in TABLES[table]])


def _write_parquet(root: Path, table: str, rows_by_run: dict[str, list[tuple]]) -> list[dict]:
    """Hive layout, one partition per run: <table>/run_id=<id>/part-0.parquet. ``run_id`` is in the directory name
    and in the file too: a reader that combines the files (Power BI's folder import) drops the path.

    Each partition is written directly rather than through pyarrow.dataset.write_dataset, so a
    run with no rows still gets its partition, holding the schema.
    """
    import duckdb
    import pyarrow.parquet as pq

    from assay.store.rows import registered

    schema = _arrow_schema(table)
    files = []
    con = duckdb.connect()  # builds the Arrow tables: pyarrow's own builders import pandas (assay.store.rows)
    for run_id, rows in rows_by_run.items():
        with registered(con, "_assay_export", {field.name: [r[i] for r in rows] for i, field in enumerate(schema)}):
            data = con.sql("SELECT * FROM _assay_export").to_arrow_table().cast(schema)
        rel = Path(table) / f"run_id={quote(run_id, safe='')}" / "part-0.parquet"
        (root / rel).parent.mkdir(parents=True)
        pq.write_table(data, root / rel)
        files.append({"path": rel.as_posix(), "table": table, "format": "parquet", "rows": len(rows),
                      "run_id": run_id})
    return files


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _write_csv(root: Path, table: str, rows_by_run: dict[str, list[tuple]]) -> list[dict]:
    """Text cells that a spreadsheet would read as a formula get a leading ' (escape.csv_cell); the
    text is otherwise exact, control characters included. Numbers are written as numbers."""
    rel = f"{table}.csv"
    n = 0
    with open(root / rel, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns(table))
        for rows in rows_by_run.values():
            writer.writerows([csv_cell(v) if isinstance(v, str) else _text(v) for v in row] for row in rows)
            n += len(rows)
    return [{"path": rel, "table": table, "format": "csv", "rows": n}]


def _json_value(value):
    return value.isoformat() if isinstance(value, datetime) else value


def _write_json(root: Path, table: str, rows_by_run: dict[str, list[tuple]]) -> list[dict]:
    rel, names = f"{table}.jsonl", columns(table)
    n = 0
    with open(root / rel, "w", encoding="utf-8", newline="\n") as f:
        for rows in rows_by_run.values():
            for row in rows:
                record = {k: _json_value(v) for k, v in zip(names, row)}
                f.write(jsonout.dumps(record, ensure_ascii=False) + "\n")
            n += len(rows)
    return [{"path": rel, "table": table, "format": "json", "rows": n}]


WRITERS = {"parquet": _write_parquet, "csv": _write_csv, "json": _write_json}


def _write_tables(warehouse, run_ids: list[str], fmt: str, root: Path, measures=DEFAULT_MEASURES) -> list[dict]:
    files = []
    for table in TABLES:
        rows_by_run = {run_id: table_rows(warehouse, table, run_id, measures) for run_id in run_ids}
        files += WRITERS[fmt](root, table, rows_by_run)
    return files


# -- TREC ----------------------------------------------------------------------------------
def _token(value: str, what: str, where: str) -> str:
    """TREC files separate fields by whitespace: an id with whitespace (or an empty one) cannot be written."""
    if not value or any(ch.isspace() for ch in value):
        raise ExportError(f"{where}: {what} {value!r} contains whitespace (or is empty), which a TREC file "
                          "cannot carry; export this run as parquet, csv or json instead")
    return value


def _trec_run(root: Path, rel: str, ranked: list[tuple], run_id: str, stage: str, level: str) -> dict:
    """ranked: (query_id, rank, docno, score) ordered by query then rank."""
    tag, lines, tied, prev = f"assay-{run_id}", [], [], None
    for qid, rank, docno, score in ranked:
        where = f"run {run_id}, stage {stage}, query {qid}"
        _token(qid, "query id", where)
        _token(docno, "chunk id" if level == "chunk" else "document id", where)
        if score is None:
            raise ExportError(f"{where}, rank {rank}: the hit has no score, which a TREC run file needs")
        if prev is not None and prev[0] == qid and not score < prev[1] and qid not in tied:
            tied.append(qid)  # trec_eval re-sorts by score, so it may reorder this query
        prev = (qid, score)
        lines.append(f"{qid} Q0 {docno} {rank} {float(score)!r} {tag}\n")
    (root / rel).write_text("".join(lines), encoding="utf-8")
    return {"path": rel, "table": "hits" if level == "chunk" else "doc_hits", "format": "trec", "level": level,
            "run_id": run_id, "stage": stage, "rows": len(lines), "tied_queries": tied}


def _write_trec(warehouse, run_ids: list[str], root: Path) -> list[dict]:
    files, qrels_done = [], set()
    for run_id in run_ids:
        run = _run_row(warehouse, run_id)
        hits = table_rows(warehouse, "hits", run_id)
        _, doc_rows = warehouse.query("exports/trec_doc_run", run_id=run_id)
        stages = json.loads(run["config"]).get("stages") or sorted({h[2] for h in hits})
        for stage in stages:
            chunk_ranked = [(q, rank, cid, score) for _, q, st, rank, cid, _, score, *_ in hits if st == stage]
            files.append(_trec_run(root, f"{run_id}.{stage}.trec", chunk_ranked, run_id, stage, "chunk"))
            doc_ranked = [(q, rank, doc, score) for st, q, rank, doc, score in doc_rows if st == stage]
            files.append(_trec_run(root, f"{run_id}.{stage}.doc.trec", doc_ranked, run_id, stage, "doc"))
        judgments = run["judgments_hash"]
        if judgments not in qrels_done:
            qrels_done.add(judgments)
            _, gold = warehouse.query("exports/trec_doc_qrels", run_id=run_id)
            where = f"judgments {judgments[:12]}"
            lines = [f"{_token(q, 'query id', where)} 0 {_token(d, 'document id', where)} {grade}\n"
                     for q, d, grade in gold]
            rel = f"{judgments[:12]}.doc.qrels"
            (root / rel).write_text("".join(lines), encoding="utf-8")
            files.append({"path": rel, "table": "gold_units", "format": "qrels", "level": "doc",
                          "judgments_hash": judgments, "rows": len(lines)})
    return files


# -- the export ----------------------------------------------------------------------------
def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise ExportError(f"{out_dir} already exists and is not an empty directory; choose a new or empty "
                          "directory for the export (assay never overwrites one)")


def export_runs(warehouse, run_ids: list[str], fmt: str, out_dir: Path, measures=DEFAULT_MEASURES,
                include_failed: bool = False) -> dict:
    """Export the given runs (any reference assay.store.run_refs reads: latest, latest~N, a name, a part of an id) to ``out_dir``; returns the manifest.

    The metric tables hold ``measures``: the standard set, plus any other measure the registry knows
    (a user's measure file included) when given. ``include_failed``: references count every run, whatever its
    status (``latest`` is then the newest run recorded, as `assay gate` reads it), and a run that did not complete
    exports its rows with its status in ``runs``, and none in the tables that score it (``SCORED``); without it,
    only complete runs are exported, as every report reads them, so a dashboard summing an export never mixes
    in a run that was never scored.

    Parquet: ``<table>/run_id=<id>/part-0.parquet``; csv: ``<table>.csv``; json: ``<table>.jsonl``;
    trec: ``<run_id>.<stage>.trec`` (chunk ids), ``<run_id>.<stage>.doc.trec`` (documents) and
    ``<judgments_hash[:12]>.doc.qrels``. Nothing is left behind if any part fails.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if not run_ids:
        raise ConfigError("no runs to export; give one or more run ids, or 'latest'")
    from assay.store.run_refs import resolve

    resolved = list(dict.fromkeys(resolve(warehouse, ref, complete=not include_failed) for ref in run_ids))
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)

    staging = out_dir.parent / f".{out_dir.name}.{secrets.token_hex(4)}.partial"
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise ExportError(f"cannot create the export next to {out_dir}: {exc}") from None
    try:
        if fmt == "trec":
            files = _write_trec(warehouse, resolved, staging)
        else:
            files = _write_tables(warehouse, resolved, fmt, staging, measures)
        tables: dict[str, int] = {}
        for f in files:
            tables[f["table"]] = tables.get(f["table"], 0) + f["rows"]
        manifest = {"assay_version": __version__, "format": fmt, "runs": resolved, "tables": tables,
                    "files": files}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _check_out_dir(out_dir)  # it may have filled up while we wrote
        if out_dir.exists():
            out_dir.rmdir()
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest
