"""The token tables (assay.store.tokens): the word pieces piece_offsets computes are the tokenizer's own, the tables
write_tokens fills are row for row those of the algorithm before migration 015 (kept below as the reference), every
span and budgeted measure reads the same values from them, and a warehouse of schema 014 keeps its rows."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.store import tokens as budget
from assay.inputs.corpus import load_corpus
from assay.measures.compute import per_query
from assay.measures.registry import builtin_families, parse_measure
from assay.store.rows import registered
from assay.runs.runner import RunOptions, run
from assay.core.sqlfiles import load_sql, migrations
from assay.store.warehouse import Warehouse
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "judgments" / "demo"
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact" / "corpus.jsonl"


def reference_write_tokens(warehouse, corpus_hash: str, chunk_set: str) -> str:
    """write_tokens as it was before migration 015 (commit 12da6cf), verbatim but for its name and imports."""
    from assay.store.tokens import TOKENIZER_NAME, token_spans, tokenizer_id

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


def assert_tokenizers_own(texts):
    counts, starts, ends = budget.piece_offsets(texts)
    own = budget.token_spans(texts)
    assert counts.tolist() == [len(o) for o in own]
    assert list(zip(starts.tolist(), ends.tolist())) == [p for o in own for p in o]


# -- the pieces -------------------------------------------------------------------------------------------------

def test_pieces_of_the_demo_corpus_are_the_tokenizers_own():
    corpus = load_corpus(DEMO / "corpus")
    assert len(corpus.documents) > 5
    assert_tokenizers_own([d.text for d in corpus.documents])


@pytest.mark.skipif(not SCIFACT.exists(), reason=f"the SciFact collection is not at {SCIFACT} (../shared is "
                                                 "absent in this checkout)")
def test_pieces_of_scifact_are_the_tokenizers_own():
    docs = [json.loads(line) for line in SCIFACT.open(encoding="utf-8")]
    texts = [f"{d['title']}\n\n{d['text']}" if d["title"] and d["text"] else d["title"] or d["text"] for d in docs]
    assert len(texts) == 5183
    assert_tokenizers_own(texts)


# Characters the fast path must leave to the tokenizer, or split at exactly as it does: whitespace of every kind,
# control and format characters, accents precomposed and combining, case that changes length when lowered, CJK,
# emoji, characters outside the vocabulary, the replacement character, and ASCII punctuation next to all of them.
ODD = (" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\x00\x07\x7f\u200b\u200d\ufeff\ufffd"
       "éÉe\u0301\u0301İıßẞﬁΣσςΑΩ東京한국語\u0627\u0644😀🏳️‍🌈\U0010fffd\u0378¿¡«»—–…")
ASCII_WORDS = ("the", "The", "THE", "retrieval", "tokenization", "supercalifragilistic", "x", "a1b2", "2024",
               "unaffable", "naive", "wal", "##", "'s", "e.g.", "(see", "below)", "U.S.A.", "--", "...", "a" * 101,
               "ab" * 60, "1" * 150)


def _generated(rng: random.Random, n: int) -> list[str]:
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 60)):
            r = rng.random()
            if r < 0.6:
                parts.append(rng.choice(ASCII_WORDS))
            elif r < 0.8:
                parts.append("".join(rng.choice(ODD) for _ in range(rng.randint(1, 4))))
            else:
                parts.append(rng.choice(ASCII_WORDS) + rng.choice(ODD) + rng.choice(ASCII_WORDS))
            parts.append(rng.choice((" ", " ", "  ", "\n", "\t", "\r\n", "", ", ", ". ", "\xa0", "\u3000")))
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("seed", range(4))
def test_pieces_of_generated_text_are_the_tokenizers_own(seed):
    texts = _generated(random.Random(seed), 300)
    assert any(not t for t in texts) and any(t.isascii() for t in texts) and any(not t.isascii() for t in texts)
    assert_tokenizers_own(texts)


def test_pieces_are_the_same_in_small_batches(monkeypatch):
    texts = _generated(random.Random(9), 200)
    whole = budget.piece_offsets(texts)
    monkeypatch.setattr(budget, "BATCH_CHARS", 50)  # about a text a batch; the word cache carries over
    monkeypatch.setattr(budget, "PART_CHARS", 7)  # the tokenizer given a word or run at a time, or a few
    batches = list(budget.piece_batches(texts))
    assert len(batches) > 50 and [b[0] for b in batches] == sorted({b[0] for b in batches})
    for got, want in zip(budget.piece_offsets(texts), whole):
        assert np.array_equal(got, want)
    assert_tokenizers_own(texts)


def test_each_character_is_one_byte_of_its_class():
    """budget._bytes keeps ASCII and maps every other character to one byte of 0x80 or above (latin-1 as itself,
    the rest 0x80), so byte positions are character positions; the classes and the lower-casing table follow."""
    assert budget._bytes("aZ é\u00ff東\U0001F600x\ty") == b"aZ \xe9\xff\x80\x80x\ty"
    table, letters = budget._classes()
    assert [int(table[b]) for b in b" \t\n\r\x0b\x00aZ9.-\x7f\x80\xe9"] == [0, 0, 0, 0, 3, 3, 1, 1, 1, 2, 2, 3, 3, 3]
    assert b"The Caf\xe9, x-RAY 9!".translate(letters) == b"the caf   x ray 9 "


def test_each_distinct_word_is_tokenized_once_in_order_of_first_sight(monkeypatch):
    """The word cache (budget._Index, _Words.keys): new words go to the tokenizer once, in order of first sight,
    across batches; ids follow that order after the 32 punctuation marks."""
    seen = []
    encoded = budget._encoded
    monkeypatch.setattr(budget, "_encoded", lambda texts: seen.append(list(texts)) or encoded(texts))
    words = budget._Words()
    assert len(seen) == 1 and len(seen[0]) == 32 and words.punctuation[ord("!")] == 0
    assert words.keys(["beta", "alpha", "beta", "gamma"]).tolist() == [32, 33, 32, 34]
    assert words.keys(["gamma", "delta", "alpha", "delta"]).tolist() == [34, 35, 33, 35]
    assert words.keys(["alpha"]).tolist() == [33]
    assert seen[1:] == [["beta", "alpha", "gamma"], ["delta"]]
    assert words.counts.tolist()[32:] == [1, 1, 1, 1] and not words.index.new


@given(st.lists(st.text(alphabet=st.one_of(st.sampled_from(ODD + " .,;()-'\"0123456789"),
                                            st.characters(min_codepoint=32, max_codepoint=126),
                                            st.characters()), max_size=40), max_size=8))
def test_pieces_of_any_text_are_the_tokenizers_own(texts):
    assert_tokenizers_own(texts)


# -- the tables, and the measures that read them ------------------------------------------------------------------

def token_rows(con):
    docs = con.execute("SELECT * FROM doc_tokens ORDER BY tokenizer_id, corpus_hash, doc_id, tok_idx").fetchall()
    chunks = con.execute("SELECT * FROM chunk_tokens ORDER BY tokenizer_id, chunk_set, chunk_id").fetchall()
    return docs, chunks


def token_measures():
    """Every measure that counts tokens: each budgeted family at budgets from one token to past a whole run, and
    each span family at cutoffs."""
    out = []
    for fam in builtin_families():
        if fam.budget_sql:
            out += [f"{fam.name}@{n}tok" for n in (1, 7, 250, 1000, 100000)]
        if fam.reads_tokens and fam.cutoff != "none":
            out += [f"{fam.name}@{k}" for k in (1, 10)]
    assert {"SpanRecall@1000tok", "nDCG@7tok", "SpanIoU@10", "Success@1tok"} <= set(out)
    return [parse_measure(name) for name in out]


def measure_values(wh):
    """{(n-th run, measure): {(question, level): value}}, runs in the order written, their final stage."""
    values = {}
    runs = wh.con.execute("SELECT run_id FROM runs ORDER BY started_at, run_id").fetchall()
    for i, (run_id,) in enumerate(runs):
        for m in token_measures():
            values[(i, m.name)] = per_query(wh, run_id, m)
    return values


def doubled(tmp_path, write):
    """Two warehouses: ``write(wh)`` into each, the first with the reference token tables, the second with ours."""
    out = []
    for name in ("reference", "new"):
        wh = Warehouse.open(tmp_path / f"{name}.duckdb")
        if name == "reference":
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(budget, "write_tokens", reference_write_tokens)
                write(wh)
        else:
            write(wh)
        out.append(wh)
    return out


def assert_same_tables_and_measures(ref, new):
    ref_docs, ref_chunks = token_rows(ref.con)
    new_docs, new_chunks = token_rows(new.con)
    assert len(ref_docs) > 100 and len(ref_chunks) > 5
    assert new_docs == ref_docs and new_chunks == ref_chunks
    # stored in the same order too (document id, then position)
    assert new.con.execute("SELECT doc_id, tok_idx FROM doc_tokens ORDER BY rowid").fetchall() == \
        ref.con.execute("SELECT doc_id, tok_idx FROM doc_tokens ORDER BY rowid").fetchall()
    ref_values, new_values = measure_values(ref), measure_values(new)
    assert len(ref_values) == len(token_measures()) * len(ref.con.execute("SELECT * FROM runs").fetchall())
    assert all(ref_values.values())
    assert sum(0 < v < 1 for values in ref_values.values() for v in values.values()) > len(ref_values)
    assert new_values == ref_values


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_demo_corpus_gets_the_reference_tables_and_values(tmp_path):
    def write(wh):
        for options in (RunOptions(chunk_size=200, overlap=50), RunOptions(chunker="document")):
            run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", options)

    ref, new = doubled(tmp_path, write)
    try:
        assert ref.con.execute("SELECT COUNT(DISTINCT chunk_set) FROM chunk_tokens").fetchall() == [(2,)]
        assert_same_tables_and_measures(ref, new)
    finally:
        ref.close()
        new.close()


def _synthetic(rng: random.Random):
    """Documents of generated text (every kind of character) with chunks cut anywhere, some inside words."""
    texts = {}
    for i, text in enumerate(_generated(rng, 40)):
        text = (text * (DOC_LEN // max(len(text), 1) + 1))[:DOC_LEN] if text else " " * DOC_LEN
        texts[f"d{i:02d}.md"] = text
    from assay.inputs.chunking import Chunk

    docs, chunks = sorted(texts), []
    for d in docs:
        cuts = sorted({0, DOC_LEN, *(rng.randrange(DOC_LEN) for _ in range(rng.randint(0, 8)))})
        spans = list(zip(cuts, cuts[1:])) + [(rng.randrange(500), rng.randrange(500, DOC_LEN))]
        for s, e in dict.fromkeys(spans):
            chunks.append(Chunk(d, len(chunks), s, e, texts[d][s:e]))
    syn = Synthetic(docs, chunks)
    for qi in range(30):
        ranked = rng.sample(chunks, rng.randint(0, 25))
        # gold inside a ranked chunk mostly, so budgets decide how much of it a prompt holds
        c = rng.choice(ranked) if ranked and rng.random() < 0.8 else rng.choice(chunks)
        s = rng.randrange(c.start, c.end)
        gold = [(c.doc_id, s, min(DOC_LEN, s + rng.randint(1, 200)), rng.randint(1, 3))]
        syn.queries.append(QuerySpec(f"q{qi:02d}", gold, [r.chunk_id for r in ranked]))
    return syn, texts


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_generated_corpus_gets_the_reference_tables_and_values(tmp_path, seed):
    syn, texts = _synthetic(random.Random(seed))
    ref, new = doubled(tmp_path, lambda wh: write_synthetic(wh, syn, texts=texts))
    try:
        assert_same_tables_and_measures(ref, new)
    finally:
        ref.close()
        new.close()


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_corpus_is_tokenized_once_and_a_rolled_back_write_leaves_nothing(warehouse):
    con = warehouse.con
    run(warehouse, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())
    docs, chunks = token_rows(con)
    run(warehouse, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())  # same corpus, same chunk set
    run(warehouse, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=300))  # a new chunk set
    docs_after, chunks_after = token_rows(con)
    assert docs_after == docs and set(chunks) < set(chunks_after)
    assert con.execute("SELECT COUNT(*) FROM (SELECT 1 FROM doc_tokens GROUP BY tokenizer_id, corpus_hash, "
                          "doc_id, tok_idx HAVING COUNT(*) > 1)").fetchall() == [(0,)]
    assert con.execute("SELECT COUNT(*) FROM (SELECT 1 FROM chunk_tokens GROUP BY tokenizer_id, chunk_set, "
                          "chunk_id HAVING COUNT(*) > 1)").fetchall() == [(0,)]
    # a write undone with its run's transaction leaves no half-written corpus behind: the next one writes it whole
    corpus_hash, chunk_set = con.execute("SELECT corpus_hash, chunk_set FROM runs LIMIT 1").fetchall()[0]
    con.execute("DELETE FROM doc_tokens")
    con.execute("DELETE FROM chunk_tokens")
    with pytest.raises(KeyboardInterrupt):
        with warehouse.transaction():
            budget.write_tokens(warehouse, corpus_hash, chunk_set)
            assert con.execute("SELECT COUNT(*) FROM doc_tokens").fetchall() == [(len(docs),)]
            raise KeyboardInterrupt
    assert token_rows(con) == ([], [])
    with warehouse.transaction():
        budget.write_tokens(warehouse, corpus_hash, chunk_set)
    assert token_rows(con)[0] == docs


# -- migration 015 --------------------------------------------------------------------------------------------------

def _keys(con):
    return sorted(con.execute("SELECT table_name, constraint_text FROM duckdb_constraints() WHERE constraint_type = "
                              "'PRIMARY KEY' AND table_name IN ('doc_tokens', 'chunk_tokens')").fetchall())


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_warehouse_of_schema_014_keeps_its_token_rows(tmp_path, capsys):
    path = tmp_path / "w014.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL)")
    for version, name, sql in migrations():
        if version <= 14:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
    old = Warehouse(path, con, read_only=False)
    assert old.schema_version() == 14 and len(_keys(con)) == 2
    with pytest.MonkeyPatch.context() as mp:  # as the code of schema 014 wrote them
        mp.setattr(budget, "write_tokens", reference_write_tokens)
        run(old, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=200, overlap=50))
    in_order = [con.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in ("doc_tokens", "chunk_tokens")]
    before = measure_values(old)
    con.close()
    capsys.readouterr()
    with Warehouse.open(path) as wh:
        assert wh.schema_version() == migrations()[-1][0] >= 15 and _keys(wh.con) == []
        # rewritten once, so the keyed tables' blocks are given back, and nothing left beside the file
        assert f"note: warehouse {path} upgraded: token tables stored without their keys, the file rewritten (" \
            in capsys.readouterr().err
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
        assert [wh.con.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall()
                for t in ("doc_tokens", "chunk_tokens")] == in_order
        assert measure_values(wh) == before
        record = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())  # and takes new runs
        assert wh.con.execute("SELECT COUNT(*) FROM doc_tokens").fetchall() == [(len(in_order[0]),)]
        assert per_query(wh, record.run_id, parse_measure("SpanRecall@1000tok"))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_two_runs_racing_for_the_write_store_a_corpus_once(tmp_path):
    """Two `assay run` processes on one new corpus compute side by side and race for the warehouse's lock: the one
    that writes second finds the pieces the first wrote, so no key repeats without an index to refuse it."""
    path = tmp_path / "w.duckdb"
    Warehouse.open(path).close()
    env = {**os.environ, "ASSAY_WAREHOUSE": str(path)}
    procs = [subprocess.Popen([sys.executable, "-m", "assay", "run", "--corpus", str(DEMO / "corpus"), "--judgments",
                               str(DEMO / "judgments.jsonl"), "--chunk-size", str(size)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for size in (300, 500)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    with Warehouse.open(tmp_path / "one.duckdb") as alone:  # the corpus written by one run alone
        run(alone, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=300))
        docs_alone = token_rows(alone.con)[0]
    con = duckdb.connect(str(path), read_only=True)
    try:
        docs, chunks = token_rows(con)
        assert docs == docs_alone
        assert len(chunks) == len(set(chunks)) == con.execute(
            "SELECT COUNT(*) FROM chunks").fetchall()[0][0] and len({c[1] for c in chunks}) == 2
    finally:
        con.close()


def test_a_chunk_costs_the_pieces_its_span_overlaps_counted_by_hand(warehouse):
    """alpha [0, 5), beta [6, 10), gamma [11, 16): a chunk cut inside a word pays for that word (as does the chunk
    on the other side of the cut), one that only touches a piece at its edge does not, a blank between pieces costs
    nothing, and overlapping chunks each pay their whole length."""
    from assay.inputs.chunking import Chunk

    text = ("alpha beta gamma " * 60)[:DOC_LEN]
    assert budget.token_spans([text[:17]])[0] == [(0, 5), (6, 10), (11, 16)]
    spans = {"cut-left": (0, 8), "cut-right": (8, 17), "blank": (5, 6), "touching": (10, 11), "all": (0, 17),
             "middle": (4, 12), "after-gamma": (16, 17)}
    chunks = [Chunk("t.md", i, s, e, text[s:e]) for i, (s, e) in enumerate(spans.values())]
    syn = Synthetic(["t.md"], chunks, [QuerySpec("q", [("t.md", 0, 5, 1)], [chunks[0].chunk_id])])
    write_synthetic(warehouse, syn, texts={"t.md": text})
    got = dict(warehouse.con.execute("SELECT chunk_id, (first_tok, n_tokens) FROM chunk_tokens").fetchall())
    want = {"cut-left": (0, 2), "cut-right": (1, 2), "blank": (0, 0), "touching": (0, 0), "all": (0, 3),
            "middle": (0, 3), "after-gamma": (0, 0)}
    assert {name: got[c.chunk_id] for name, c in zip(spans, chunks)} == want
