"""Corpora and judgment sets stored in the warehouse, referred to as '@name' (imports) or by hash.

`assay run --corpus @scifact --judgments @scifact/test` reads them from the
warehouse instead of from files. Imported corpora keep each document's title
apart (documents.title); the text a run chunks is the title, a blank line, and
the body.
"""

from __future__ import annotations

from pathlib import Path

from assay.inputs.corpus import Corpus, Document
from assay.core.errors import CorpusError, JudgmentsError
from assay.inputs.judgments.model import GoldEntry, Judgment, JudgmentSet


def is_ref(value) -> bool:
    return isinstance(value, str) and value.startswith("@") or (isinstance(value, Path) and str(value).startswith("@"))


def _known(warehouse, table: str) -> str:
    names = [n for n, in warehouse.con.execute(f"SELECT name FROM {table} WHERE name IS NOT NULL ORDER BY name").fetchall()]
    return ", ".join("@" + n for n in names) or "none yet (`assay import beir|trec` stores them)"


def stored_corpus(warehouse, ref: str) -> Corpus:
    name = str(ref)[1:]
    rows = warehouse.con.execute("SELECT corpus_hash FROM corpora WHERE name = ?", [name]).fetchall()
    if not rows:
        raise CorpusError(f"no stored corpus named {ref} in {warehouse.path}; stored: {_known(warehouse, 'corpora')}")
    return corpus_by_hash(warehouse, rows[0][0], Path(str(ref)))


def corpus_by_prefix(warehouse, prefix: str) -> Corpus:
    """A stored corpus by its hash or a prefix of it (the 12 digits runs print): what a corpus directory held
    when a run read it, after the directory changed."""
    rows = warehouse.con.execute("SELECT corpus_hash, root FROM corpora WHERE starts_with(corpus_hash, ?) "
                                 "ORDER BY corpus_hash", [prefix.lower()]).fetchall()
    if not rows:
        raise CorpusError(f"no stored corpus has a hash starting {prefix} in {warehouse.path}; `assay runs` lists "
                          "the corpus of each run")
    if len(rows) > 1:
        raise CorpusError(f"{len(rows)} stored corpora have a hash starting {prefix} "
                          f"({', '.join(h[:16] for h, _ in rows[:5])}); give more digits")
    corpus_hash, root = rows[0]
    return corpus_by_hash(warehouse, corpus_hash, Path(f"{root}, as stored"))


def corpus_by_hash(warehouse, corpus_hash: str, root: Path | None = None) -> Corpus:
    """A corpus as the warehouse holds it (every ingested or imported corpus is stored whole)."""
    import json

    docs = warehouse.con.execute(
        "SELECT doc_id, text, byte_size, sha256, format, encoding, encoding_source FROM documents "
        "WHERE corpus_hash = ? ORDER BY doc_id", [corpus_hash]).fetchall()
    pages: dict[str, list] = {}
    for doc_id, start, end in warehouse.con.execute(
            "SELECT doc_id, start_char, end_char FROM document_pages WHERE corpus_hash = ? ORDER BY doc_id, page",
            [corpus_hash]).fetchall():
        pages.setdefault(doc_id, []).append((start, end))
    readers = warehouse.con.execute("SELECT readers FROM corpora WHERE corpus_hash = ?", [corpus_hash]).fetchall()
    return Corpus(root or Path(f"warehouse:corpus/{corpus_hash[:12]}"), corpus_hash,
                  tuple(Document(d, t, b, s, tuple(pages.get(d, ())), f, e, es) for d, t, b, s, f, e, es in docs),
                  readers=json.loads(readers[0][0]) if readers and readers[0][0] else {})


def stored_judgments(warehouse, ref: str) -> JudgmentSet:
    name = str(ref)[1:]
    rows = warehouse.con.execute("SELECT judgments_hash FROM judgment_sets WHERE name = ?", [name]).fetchall()
    if not rows:
        raise JudgmentsError([f"no stored judgment set named {ref} in {warehouse.path}; stored: "
                              f"{_known(warehouse, 'judgment_sets')}"], "cannot read judgments")
    h = rows[0][0]
    gold: dict[str, list[GoldEntry]] = {}
    for qid, doc, quote, grade in warehouse.con.execute(
            "SELECT query_id, doc_id, quote, grade FROM judgment_gold WHERE judgments_hash = ? "
            "ORDER BY query_id, gold_idx", [h]).fetchall():
        gold.setdefault(qid, []).append(GoldEntry(doc, quote, grade))
    judgments = tuple(
        Judgment(qid, text, category, form, hard_class, tuple(gold.get(qid, ())), unanswerable, notes, line)
        for qid, text, category, form, hard_class, unanswerable, notes, line in warehouse.con.execute(
            "SELECT query_id, query_text, category, form, hard_class, unanswerable, notes, line FROM queries "
            "WHERE judgments_hash = ? ORDER BY query_id", [h]).fetchall())
    return JudgmentSet(Path(str(ref)), h, judgments)
