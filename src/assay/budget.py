"""Context budgets: the tokenizer assay counts prompt tokens with, and the token tables it fills.

The unit of a budget is one word piece of all-MiniLM-L6-v2's WordPiece tokenizer
(the bert-base-uncased vocabulary, lower-cased, 30,522 pieces), shipped with assay
in ``data/minilm-wordpiece-tokenizer.json`` so budgets need no download and no model.
Special tokens are not counted and nothing is truncated. English prose runs about
4.3 characters per piece; an LLM's own tokenizer differs by a few per cent, so read
a budget as "about this much prompt", identical for every run compared.

Each document is tokenized once per corpus (``doc_tokens``: every piece with its
character span). A chunk costs the document pieces that overlap its span
(``chunk_tokens``), so a chunk boundary inside a word charges that word to both
chunks, as a prompt holding both chunks would. Overlapping chunks each cost their
full length: a prompt pays for repeated text.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

TOKENIZER_FILE = Path(__file__).parent / "data" / "minilm-wordpiece-tokenizer.json"
TOKENIZER_NAME = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary, lower-cased)"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@lru_cache(maxsize=1)
def tokenizer():
    from tokenizers import Tokenizer

    from assay.errors import AssayError

    data = TOKENIZER_FILE.read_bytes()
    if hashlib.sha256(data).hexdigest() != TOKENIZER_SHA256:
        raise AssayError(f"{TOKENIZER_FILE} does not match its pinned SHA-256; reinstall assay")
    tok = Tokenizer.from_str(data.decode("utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def tokenizer_id() -> str:
    return TOKENIZER_SHA256


def token_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """For each text, every word piece as a [start, end) character span, in order."""
    encodings = tokenizer().encode_batch(texts, add_special_tokens=False)
    return [e.offsets for e in encodings]


def count_tokens(text: str) -> int:
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


def write_tokens(warehouse, corpus_hash: str, chunk_set: str) -> str:
    """Token tables for a stored corpus and chunk set (each computed once); returns the tokenizer id.

    Runs inside the caller's transaction; the corpus's documents and the chunk set's chunks must be stored.
    """
    from assay.rows import registered
    from assay.sqlfiles import load_sql

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


def backfill(warehouse) -> int:
    """Token tables for every stored run recorded before budgets existed; returns how many (corpus, chunk set)
    pairs were tokenized."""
    runs = warehouse.con.execute("SELECT DISTINCT corpus_hash, chunk_set FROM runs WHERE tokenizer_id IS NULL "
                                 "ORDER BY corpus_hash, chunk_set").fetchall()
    for corpus_hash, chunk_set in runs:
        write_tokens(warehouse, corpus_hash, chunk_set)
    if runs:
        warehouse.con.execute("UPDATE runs SET tokenizer_id = ? WHERE tokenizer_id IS NULL", [tokenizer_id()])
    return len(runs)
