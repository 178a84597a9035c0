"""Runs end to end on a real corpus, real tantivy index and real DuckDB file."""

import json

import pytest

from assay.core.errors import ConfigError, JudgmentsError, WarehouseError
from assay.runs.runner import RunOptions, execute_run, run
from assay.store.warehouse import Warehouse


def count(wh, table):
    return wh.con.execute(f"SELECT COUNT(*) FROM {table}").fetchall()[0][0]


def test_run_records_everything(warehouse, mini_corpus, mini_judgments):
    record = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    row = warehouse.con.execute(
        "SELECT status, pipeline, config, config_hash, corpus_hash, judgments_hash, versions, seed, tie_break "
        "FROM runs WHERE run_id = ?", [record.run_id]).fetchall()[0]
    status, pipeline, config, chash, corpus_hash, jhash, versions, seed, tie = row
    assert (status, pipeline, seed) == ("complete", "bm25", 0)
    config = json.loads(config)
    assert config["chunker"] == {"name": "recursive", "size": 120, "overlap": 0}
    assert config["retrieval"]["bm25"]["analyzer"]["stemming"] is True
    assert len(chash) == 64 and corpus_hash == record.corpus.corpus_hash
    assert json.loads(versions)["tantivy"]
    assert tie == "score desc, chunk_id asc"
    assert count(warehouse, "run_queries") == 6
    # the no_answer question about tulips matches no term: it returns nothing (abstains)
    n = warehouse.con.execute("SELECT n_results FROM run_queries WHERE query_id = 'tulips'").fetchall()[0][0]
    assert n == 0
    # bm25 and final stages are both recorded, ranks 1..n without gaps
    stages = warehouse.con.execute(
        "SELECT stage, query_id, COUNT(*), MIN(rank), MAX(rank) FROM hits GROUP BY stage, query_id").fetchall()
    assert {s for s, *_ in stages} == {"bm25", "final"}
    assert all(lo == 1 and hi == c for _, _, c, lo, hi in stages)


def test_hits_are_ordered_by_score_then_chunk_id(warehouse, mini_corpus, mini_judgments):
    record = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    rows = warehouse.con.execute(
        "SELECT query_id, rank, score, chunk_id FROM hits WHERE run_id = ? AND stage = 'final' ORDER BY query_id, rank",
        [record.run_id]).fetchall()
    by_q = {}
    for qid, rank, score, cid in rows:
        by_q.setdefault(qid, []).append((score, cid))
    for hits in by_q.values():
        assert hits == sorted(hits, key=lambda h: (-h[0], h[1]))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_rechunking_needs_no_judgment_change(warehouse, mini_corpus, mini_judgments):
    a = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=80))
    b = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunker="fixed", chunk_size=60, overlap=20))
    assert a.chunk_set != b.chunk_set and a.config_hash != b.config_hash
    assert count(warehouse, "judgment_sets") == 1 and count(warehouse, "corpora") == 1
    assert count(warehouse, "chunk_sets") == 2 and count(warehouse, "runs") == 2


def test_broken_quote_fails_before_indexing_and_records_nothing(tmp_path, mini_corpus, mini_judgments):
    bad = tmp_path / "bad.jsonl"
    lines = mini_judgments.read_text().splitlines()
    lines[2] = lines[2].replace("Every page is 4096 bytes.", "Every page is 8192 bytes.")
    bad.write_text("\n".join(lines) + "\n")
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        with pytest.raises(JudgmentsError) as exc:
            run(wh, mini_corpus, bad, RunOptions())
        assert f"{bad}:3 (query page-size): quote not found in storage/design.md" in str(exc.value)
        for table in ("runs", "corpora", "documents", "chunks", "hits", "queries"):
            assert count(wh, table) == 0


def test_a_failure_while_writing_leaves_nothing(warehouse, mini_corpus, mini_judgments):
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    record.hits.append(record.hits[0])  # a rank twice in one list: refused after the run's other rows are in
    with pytest.raises(WarehouseError, match="duplicate hit at rank 1 of stage bm25"):
        warehouse.write_run(record)
    for table in ("runs", "corpora", "documents", "chunk_sets", "chunks", "chunk_keys", "judgment_sets", "queries",
                  "gold_spans", "run_queries", "hits", "hit_lists", "hit_rows"):
        assert count(warehouse, table) == 0, table


def test_an_interrupt_while_writing_leaves_nothing(warehouse, mini_corpus, mini_judgments, monkeypatch):
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    real_insert = Warehouse._insert

    def interrupted(self, table, columns, rows):
        if table == "hit_lists":  # the hits' last insert: their rows are in, their lists not yet
            raise KeyboardInterrupt
        return real_insert(self, table, columns, rows)

    monkeypatch.setattr(Warehouse, "_insert", interrupted)
    with pytest.raises(KeyboardInterrupt):
        warehouse.write_run(record)
    assert count(warehouse, "runs") == 0 and count(warehouse, "documents") == 0


def test_doc_depth_deepens_retrieval(warehouse, mini_corpus, mini_judgments):
    record = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=60, depth=1, doc_depth=3))
    rows = warehouse.con.execute(
        "SELECT query_id, COUNT(*), COUNT(DISTINCT doc_id) FROM hits WHERE run_id = ? AND stage = 'final' "
        "GROUP BY query_id", [record.run_id]).fetchall()
    assert any(n > 1 for _, n, _ in rows)
    # (question, chunks, distinct documents): deepened from 1 chunk until 3 documents, or until BM25's
    # matches run out (restore and wal-purpose match words of only two documents)
    assert sorted(rows) == [("backup-readers", 4, 3), ("cache-size", 8, 3), ("page-size", 4, 3), ("restore", 2, 2),
                            ("wal-purpose", 4, 2)]


def test_analyzer_switches_change_the_run(warehouse, mini_corpus, mini_judgments):
    plain = run(warehouse, mini_corpus, mini_judgments, RunOptions(stemming=False, stopwords=False))
    assert plain.config["retrieval"]["bm25"]["analyzer"] == {
        "tokenizer": "simple", "lowercase": True, "stopwords": False, "stemming": False, "remove_long": 40}
    # without stop-word removal, "when should ... be" now matches stop words in the corpus
    n = dict((q, n) for q, _, n in plain.query_rows)["tulips"]
    assert n > 0


@pytest.mark.parametrize("kw, message", [
    ({"pipeline": "nope"}, "unknown pipeline 'nope'"),
    ({"depth": 0}, "depth must be an integer from 1 to 100000, got 0"),
    ({"chunker": "fixed", "chunk_size": 10, "overlap": 10}, "overlap must be at least 0 and below"),
])
def test_bad_options(warehouse, mini_corpus, mini_judgments, kw, message):
    with pytest.raises(ConfigError, match=message):
        run(warehouse, mini_corpus, mini_judgments, RunOptions(**kw))
