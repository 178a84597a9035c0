"""`assay import beir|trec`: standard test collections into the warehouse, streamed.

Documents are read one at a time and inserted in batches, so memory does not grow
with the collection. A corpus is stored under a staging key, then keyed by its
hash, computed in the warehouse over the documents in doc_id order:

    corpus hash = SHA-256( for each doc in doc_id order: doc_id, NUL, SHA-256(text), LF )

The judgment set holds the queries that have at least one relevant document
(grade >= 1) in the qrels, each with whole-document gold entries graded by the
qrels (grades <= 0 are judged non-relevant and kept out, as trec_eval does).
Its hash is that of the JSONL file it amounts to (`assay.store.collections`). Imported
questions are labelled category normal, form unlabeled, hard_class imported.

Each import reports what a user would otherwise miss: the queries left out for having no
relevant document in the qrels (how many, split into those the qrels never name and those judged
only non-relevant, and the first few ids), and the documents with neither title nor text. Empty
documents are kept, judged ones included (Cranfield's '471' is judged relevant): their ids and
whole-document judgments hold, though no words of theirs can be retrieved or quoted.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from pathlib import Path

from assay.core import progress
from assay.core.errors import AssayError, ConfigError
from assay.core.hashing import sha256_text

BATCH = 5000
SHOWN = 5  # ids named in an import's report; the rest are counted


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _check_name(warehouse, table: str, name: str) -> None:
    if not name or "@" in name or any(c.isspace() for c in name):
        raise ConfigError(f"name {name!r} must be non-empty, without spaces or '@'")
    if warehouse.con.execute(f"SELECT COUNT(*) FROM {table} WHERE name = ?", [name]).fetchall()[0][0]:
        what = {"corpora": "a corpus", "judgment_sets": "a judgment set"}[table]
        raise AssayError(f"the warehouse already holds {what} named @{name}; choose another --name")


def _doc_text(title: str, text: str) -> str:
    return f"{title}\n\n{text}" if title and text else (title or text)


def import_corpus(warehouse, docs, name: str, source: str) -> dict:
    """Stream documents into the warehouse (inside the caller's transaction). Returns the corpus summary."""
    _check_name(warehouse, "corpora", name)
    staging = "staging-" + secrets.token_hex(8)
    batch, n, total, empty = [], 0, 0, []
    for doc in docs:
        text = _doc_text(doc.title, doc.text)
        if not text.strip():
            empty.append(doc.doc_id)
        data = text.encode("utf-8")
        batch.append((staging, doc.doc_id, text, len(data), sha256_text(text), doc.title or None))
        n += 1
        total += len(data)
        if len(batch) >= BATCH:
            warehouse._insert("documents", ["corpus_hash", "doc_id", "text", "byte_size", "sha256", "title"], batch)
            batch = []
    if batch:
        warehouse._insert("documents", ["corpus_hash", "doc_id", "text", "byte_size", "sha256", "title"], batch)
    if n == 0:
        raise AssayError(f"{source}: no documents")
    with progress.task(f"hashing {n:,} documents", unit=None):
        corpus_hash = warehouse.con.execute(
            "SELECT sha256(string_agg(doc_id || chr(0) || sha256 || chr(10), '' ORDER BY doc_id)) "
            "FROM documents WHERE corpus_hash = ?", [staging]).fetchall()[0][0]
    existing = warehouse.con.execute("SELECT name FROM corpora WHERE corpus_hash = ?", [corpus_hash]).fetchall()
    if existing:
        warehouse.con.execute("DELETE FROM documents WHERE corpus_hash = ?", [staging])
        raise AssayError(f"this corpus is already in the warehouse (corpus {corpus_hash[:12]}"
                         + (f", as @{existing[0][0]})" if existing[0][0] else ")"))
    warehouse.con.execute("UPDATE documents SET corpus_hash = ? WHERE corpus_hash = ?", [corpus_hash, staging])
    warehouse.con.execute("INSERT INTO corpora (corpus_hash, root, n_documents, total_bytes, ingested_at, name) "
                          "VALUES (?, ?, ?, ?, ?, ?)", [corpus_hash, source, n, total, _now(), name])
    return {"corpus": "@" + name, "corpus_hash": corpus_hash, "documents": n, "bytes": total,
            "empty_documents": sorted(empty)}


def import_judgments(warehouse, queries, qrels, name: str, corpus_hash: str, source: str,
                     empty_documents=()) -> dict:
    """Queries with relevant documents, as a judgment set with whole-document gold entries.

    ``empty_documents``: ids of the corpus's documents without text, to say which of them are judged relevant.
    """
    _check_name(warehouse, "judgment_sets", name)
    gold: dict[str, dict[str, int]] = {}
    judged_non_relevant = 0
    non_relevant_only: set[str] = set()  # queries the qrels name; those with a relevant document leave below
    for q in qrels:
        if q.grade >= 1:
            gold.setdefault(q.query_id, {})[q.doc_id] = max(q.grade, gold.get(q.query_id, {}).get(q.doc_id, 0))
        else:
            judged_non_relevant += 1
            non_relevant_only.add(q.query_id)
    texts = {}
    left_out: list[str] = []
    for q in queries:
        if q.query_id in gold:
            texts[q.query_id] = q.text
        else:
            left_out.append(q.query_id)
    missing_q = sorted(set(gold) - set(texts))
    if missing_q:
        raise AssayError(f"{source}: {len(missing_q)} judged queries have no text ({', '.join(missing_q[:5])})")
    docs = {d for g in gold.values() for d in g}
    from assay.store.rows import registered

    with registered(warehouse.con, "_assay_gold_docs", {"doc_id": sorted(docs)}):
        absent = [d for d, in warehouse.con.execute(
            "SELECT g.doc_id FROM _assay_gold_docs g WHERE NOT EXISTS (SELECT 1 FROM documents d "
            "WHERE d.corpus_hash = ? AND d.doc_id = g.doc_id) ORDER BY 1", [corpus_hash]).fetchall()]
    if absent:
        raise AssayError(f"{source}: {len(absent)} relevant documents are not in the corpus ({', '.join(absent[:5])})")
    lines, query_rows, gold_rows = [], [], []
    for line_no, qid in enumerate(sorted(gold), start=1):
        entries = [{"doc": d, "grade": g} for d, g in sorted(gold[qid].items())]
        record = {"query_id": qid, "query": texts[qid], "category": "normal", "form": "unlabeled",
                  "hard_class": "imported", "gold": entries}
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
        query_rows.append((qid, texts[qid], line_no))
        gold_rows += [(qid, i, e["doc"], e["grade"]) for i, e in enumerate(entries)]
    h = sha256_text("\n".join(lines) + "\n")
    if warehouse.con.execute("SELECT COUNT(*) FROM judgment_sets WHERE judgments_hash = ?", [h]).fetchall()[0][0]:
        raise AssayError(f"these judgments are already in the warehouse (judgments {h[:12]})")
    warehouse._insert("judgment_sets", ["judgments_hash", "source_path", "n_queries", "loaded_at", "name"],
                      [(h, source, len(query_rows), _now(), name)])
    warehouse._insert("queries", ["judgments_hash", "query_id", "query_text", "category", "form", "hard_class",
                                  "unanswerable", "notes", "line"],
                      [(h, qid, text, "normal", "unlabeled", "imported", None, None, line) for qid, text, line in query_rows])
    warehouse._insert("judgment_gold", ["judgments_hash", "query_id", "gold_idx", "doc_id", "quote", "grade"],
                      [(h, qid, i, d, None, g) for qid, i, d, g in gold_rows])
    non_relevant_only -= set(gold)
    empty = set(empty_documents)
    return {"judgments": "@" + name, "judgments_hash": h, "queries": len(query_rows), "gold_entries": len(gold_rows),
            "judged_non_relevant": judged_non_relevant, "qrels": source, "queries_read": len(texts) + len(left_out),
            "queries_left_out": left_out,  # in the order of the queries file
            "left_out_non_relevant_only": [q for q in left_out if q in non_relevant_only],
            "empty_judged": sorted(d for d in docs if d in empty)}


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (f", +{len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def report_lines(summary: dict) -> list[str]:
    """What an import left out or kept with a caveat, as ``warning:`` and ``note:`` lines (none when all is plain)."""
    lines = []
    empty, judged = summary.get("empty_documents", []), summary.get("empty_judged", [])
    if empty:
        noun = "document has" if len(empty) == 1 else "documents have"
        line = (f"warning: {len(empty)} {noun} neither title nor text ({_ids(empty)}); kept, so their ids and "
                "whole-document judgments hold, but no words of theirs can be retrieved or quoted")
        if judged:
            line += f"; {len(judged)} of them judged relevant ({_ids(judged)})"
        lines.append(line)
    left = summary.get("queries_left_out", [])
    if left:
        only = summary.get("left_out_non_relevant_only", [])
        line = (f"note: {len(left)} of {summary['queries_read']} queries have no relevant document in "
                f"{Path(summary['qrels']).name} and were left out ({_ids(left)})")
        if only:
            line += f"; {len(only)} judged only non-relevant ({_ids(only)})"
        lines.append(line)
    return lines


def import_beir(warehouse, directory, split: str, name: str | None = None) -> dict:
    from assay.inputs.formats import beir

    directory = Path(directory)
    name = name or directory.name
    qrels_path = directory / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise ConfigError(f"{qrels_path}: no such split; available: {', '.join(beir.splits(directory)) or 'none'}")
    with warehouse.transaction():
        corpus = import_corpus(warehouse, beir.read_corpus(directory / "corpus.jsonl"), name, str(directory))
        judgments = import_judgments(warehouse, beir.read_queries(directory / "queries.jsonl"),
                                     beir.read_qrels(qrels_path), f"{name}/{split}", corpus["corpus_hash"],
                                     str(qrels_path), corpus["empty_documents"])
    return {**corpus, **judgments}


def import_trec(warehouse, docs, topics, qrels, name: str, fields=("title",)) -> dict:
    from assay.inputs.formats import trec

    with warehouse.transaction():
        corpus = import_corpus(warehouse, trec.read_docs(docs), name, str(docs))
        judgments = import_judgments(warehouse, trec.read_topics(topics, fields=fields), trec.read_qrels(qrels),
                                     name, corpus["corpus_hash"], str(qrels), corpus["empty_documents"])
    return {**corpus, **judgments}
