"""Hits stored compactly (assay.store.hits, migration 013) and the run tables without indexes (014): every stage's
list reads back exactly, scores bit for bit; a list equal to the first rows of its input, or to its source run's,
is stored once; any other list is stored; what no index checks any more is refused when a run is written; an old
warehouse (schema 012, written by the code before) migrates with every hit and every other row kept."""

import gzip
import shutil
import struct
from dataclasses import replace

import duckdb
import pytest

from assay.core.errors import WarehouseError
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.runs.rescore import rescore
from assay.runs.runner import RunOptions, execute_run, run
from assay.core.sqlfiles import migrations
from assay.store.warehouse import Warehouse
from conftest import FIXTURES, MINI

OLD = FIXTURES / "warehouse-012.duckdb.gz"  # made by tests/fixtures/make_warehouse_012.py
COLUMNS = "run_id, query_id, stage, rank, chunk_id, doc_id, score"


def exact(rows) -> list[tuple]:
    """Rows with each score as its 8 bytes, sorted: == is then bit for bit (NaN, -0.0 included)."""
    return sorted(tuple(r[:-1]) + (None if r[-1] is None else struct.pack("<d", r[-1]),) for r in rows)


def stored(con, run_id=None) -> list[tuple]:
    where, params = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
    return exact(con.execute(f"SELECT {COLUMNS} FROM hits {where}", params).fetchall())


def written(record) -> list[tuple]:
    return exact((record.run_id, *h) for h in record.hits)


def lists(wh, run_id) -> dict:
    """{(query_id, stage): (list_key, through_rank)}"""
    return {(q, s): (k, t) for q, s, k, t in wh.con.execute(
        "SELECT query_id, stage, list_key, through_rank FROM hit_lists WHERE run_id = ?", [run_id]).fetchall()}


def n_rows(wh) -> int:
    return wh.con.execute("SELECT COUNT(*) FROM hit_rows").fetchall()[0][0]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_stage_reads_back_exactly_and_a_copy_of_its_input_is_stored_once(warehouse, mini_corpus,
                                                                                mini_judgments):
    whole = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    cut = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=120, final_k=2))
    before = n_rows(warehouse)
    hybrid = run(warehouse, mini_corpus, mini_judgments, RunOptions("hybrid", chunk_size=120))
    for record in (whole, cut, hybrid):
        assert stored(warehouse.con, record.run_id) == written(record)
    bm25 = sum(1 for h in whole.hits if h[1] == "bm25")
    assert before == 2 * bm25  # each BM25 run stores its bm25 list; final reads it
    for record, depth in ((whole, None), (cut, 2)):
        own = lists(warehouse, record.run_id)
        for (query_id, stage), (key, through) in own.items():
            if stage == "final":
                first = own[(query_id, "bm25")]
                assert key == first[0] and through == (min(depth, first[1]) if depth else first[1])
    own = lists(warehouse, hybrid.run_id)
    stages = {s for _, s in own}
    assert stages == {"bm25", "dense", "fusion", "final"}
    assert all(own[(q, "final")][0] == own[(q, "fusion")][0] for q, s in own if s == "final")
    assert all(own[(q, "fusion")][0] != own[(q, "dense")][0] for q, s in own if s == "fusion")
    assert n_rows(warehouse) - before == sum(1 for h in hybrid.hits if h[1] != "final")


def handmade(record):
    """``record`` with its first questions' lists replaced by lists that test each way a list can differ from
    its input, or equal its start."""
    queries = [r[0] for r in record.query_rows]
    chunks = [(c.chunk_id, c.doc_id) for c in record.chunks[:4]]
    (a, da), (b, db), (c, dc), (d, dd) = chunks
    nan, inf = float("nan"), float("inf")
    lists = {
        queries[0]: {"bm25": [(a, da, -0.0), (b, db, 0.0), (c, dc, nan)],
                     "final": [(a, da, 0.0)]},                                  # -0.0 is not 0.0: stored
        queries[1]: {"bm25": [(a, da, inf), (b, db, -inf), (c, dc, None), (d, dd, 5e-324)],
                     "final": [(a, da, inf), (b, db, -inf), (c, dc, None)]},   # the first three: read
        queries[2]: {"bm25": [(a, da, 0.30000000000000004), (b, db, 0.2)],
                     "final": [(a, da, 0.3), (b, db, 0.2)]},                     # one bit apart: stored
        queries[3]: {"bm25": [(a, da, 2.0), (b, db, 1.0)],
                     "final": [(b, db, 2.0), (a, da, 1.0)]},                     # another order: stored
        queries[4]: {"bm25": [(a, da, 2.0)],
                     "final": [(a, da, 2.0), (b, db, 1.0)]},                     # longer than its input: stored
        queries[5]: {"bm25": [("nowhere.md#0-10", "nowhere.md", 0.5), (a, "other.md", 0.25)],
                     "final": [("nowhere.md#0-10", "nowhere.md", 0.5)]},         # chunks the set lacks: read
    }
    hits = [h for h in record.hits if h[0] not in lists]
    for query_id, stages in lists.items():
        for stage, rows in stages.items():
            hits += [(query_id, stage, rank, *row) for rank, row in enumerate(rows, 1)]
    return replace(record, hits=hits), queries


def test_a_list_that_differs_from_its_input_in_any_way_is_stored(warehouse, mini_corpus, mini_judgments):
    record, queries = handmade(execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120)))
    warehouse.write_run(record)
    assert stored(warehouse.con, record.run_id) == written(record)
    own = lists(warehouse, record.run_id)
    read = {q for q in queries if own[(q, "final")][0] == own[(q, "bm25")][0]}
    assert read == {queries[1], queries[5]}
    assert own[(queries[1], "final")][1] == 3
    extra = warehouse.con.execute("SELECT chunk_id, doc_id FROM chunk_keys WHERE chunk_id NOT IN "
                                  "(SELECT chunk_id FROM chunks) OR doc_id = 'other.md' ORDER BY 1").fetchall()
    assert extra == [("nowhere.md#0-10", "nowhere.md"), (record.chunks[0].chunk_id, "other.md")]


def test_a_rank_twice_in_a_list_is_refused_and_nothing_is_written(warehouse, mini_corpus, mini_judgments):
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    query_id, stage, rank, *_ = record.hits[5]
    other = next(h for h in record.hits if (h[0], h[1]) == (query_id, stage) and h[2] != rank)
    bad = replace(record, hits=record.hits + [(query_id, stage, rank, *other[3:])])
    with pytest.raises(WarehouseError, match=f"duplicate hit at rank {rank} of stage {stage} for question "
                                             f"{query_id}"):
        warehouse.write_run(bad)
    for table in ("runs", "hit_lists", "hit_rows", "chunk_keys", "chunks"):
        assert warehouse.con.execute(f"SELECT COUNT(*) FROM {table}").fetchall() == [(0,)], table


@pytest.mark.parametrize("table, repeat, message", [
    ("query_rows", lambda r: r.query_rows + r.query_rows[:1], "question {q} given twice"),
    ("stage_latency", lambda r: r.stage_latency + r.stage_latency[:1], "stage latency of question and stage {q} / bm25 "
                                                                        "given twice"),
])
def test_a_question_or_its_stage_latency_twice_is_refused(warehouse, mini_corpus, mini_judgments, table, repeat,
                                                          message):
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    with pytest.raises(WarehouseError, match=message.format(q=record.query_rows[0][0])):
        warehouse.write_run(replace(record, **{table: repeat(record)}))
    assert warehouse.con.execute("SELECT COUNT(*) FROM runs").fetchall() == [(0,)]


def test_a_rescore_reads_its_source_lists(tmp_path, warehouse, mini_corpus, mini_judgments):
    source = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    four = tmp_path / "four.jsonl"
    four.write_text("".join(mini_judgments.read_text().splitlines(keepends=True)[:4]))
    rows = n_rows(warehouse)
    derived = rescore(warehouse, source.run_id, four)["run_id"]
    assert n_rows(warehouse) == rows
    kept = {r[0] for r in source.query_rows[:4]}
    assert stored(warehouse.con, derived) == exact((derived, *h) for h in source.hits if h[0] in kept)
    mine, theirs = lists(warehouse, derived), lists(warehouse, source.run_id)
    assert mine == {k: v for k, v in theirs.items() if k[0] in kept}


@pytest.fixture
def old_warehouse(tmp_path):
    path = tmp_path / "w.duckdb"
    with gzip.open(OLD) as f, open(path, "wb") as out:
        shutil.copyfileobj(f, out)
    return path


def tables(con) -> dict:
    names = [n for n, in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    return {n: sorted(con.execute(f"SELECT * FROM {n}").fetchall(), key=repr)
            for n in names if n not in ("hits", "schema_migrations")}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_an_old_warehouse_migrates_with_every_hit_exactly(old_warehouse, capsys):
    size = old_warehouse.stat().st_size
    con = duckdb.connect(str(old_warehouse), read_only=True)
    assert con.execute("SELECT MAX(version) FROM schema_migrations").fetchall() == [(12,)]
    before, others = stored(con), tables(con)
    runs = con.execute("SELECT run_id, kind, pipeline, source_run_id FROM runs ORDER BY run_id").fetchall()
    con.close()
    hand = "20260101T000000-0000ff"
    assert Warehouse.upgrade(old_warehouse)[1:] == (12, migrations()[-1][0])  # `assay upgrade`
    with Warehouse.open(old_warehouse, read_only=True) as wh:
        assert wh.schema_version() == migrations()[-1][0]
        # the file rewritten once: the old hits' blocks given back, nothing left beside it
        assert old_warehouse.stat().st_size < size and sorted(p.name for p in old_warehouse.parent.iterdir()) == [
            "w.duckdb"]
        assert f"note: warehouse {old_warehouse} upgraded: hits stored compactly, the file rewritten" in \
            capsys.readouterr().err
        assert stored(wh.con) == before
        after = tables(wh.con)
        assert {n: after[n] for n in others} == others  # every other table as it was
        assert n_rows(wh) < len(before)
        for run_id, kind, pipeline, source in runs:
            own = lists(wh, run_id)
            if kind == "rescore":  # its source's lists, read, not copied
                theirs = lists(wh, source)
                assert own == {k: theirs[k] for k in own}
            elif run_id != hand:  # final reads its input's list: bm25, or fusion in the hybrid run
                first = "bm25" if pipeline == "bm25" else "fusion"
                assert all(k == own[(q, first)][0] for (q, s), (k, _) in own.items() if s == "final"), run_id
        own = lists(wh, hand)
        queries = sorted({q for q, _ in own})
        read = {(q, s) for (q, s), (k, _) in own.items() if s != "bm25" and k == own[(q, "bm25")][0]}
        # rerank the first rows of bm25, and final of rerank (so of bm25); a final whose question has no rerank
        # list (its input stage) is stored, and so are the lists that differ
        assert read == {(queries[0], "rerank"), (queries[1], "rerank"), (queries[1], "final")}
        # values computed now equal the values the old code stored
        for run_id, *_ in runs:
            stored_values = dict(((q, level), v) for q, level, v in wh.con.execute(
                "SELECT query_id, level, value FROM measure_values WHERE run_id = ? AND measure = 'nDCG@10' "
                "AND stage = 'final'", [run_id]).fetchall())
            if stored_values:
                assert per_query(wh, run_id, parse_measure("nDCG@10")) == stored_values, run_id
    with Warehouse.open(old_warehouse) as wh:  # and takes new runs
        record = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))
        assert stored(wh.con, record.run_id) == written(record)
        assert stored(wh.con) == sorted(before + written(record))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_an_upgrade_that_cannot_rewrite_the_file_keeps_it_whole(old_warehouse, monkeypatch, capsys):
    con = duckdb.connect(str(old_warehouse), read_only=True)
    before = stored(con)
    con.close()

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("assay.store.warehouse.os.replace", full_disk)
    with Warehouse.open(old_warehouse) as wh:
        assert wh.schema_version() == migrations()[-1][0] and stored(wh.con) == before
    assert "was upgraded but not rewritten to give back the space its old hits took ([Errno 28] No space left on " \
           "device); it fills that space before it grows" in capsys.readouterr().err
    assert sorted(p.name for p in old_warehouse.parent.iterdir()) == ["w.duckdb"]
    with Warehouse.open(old_warehouse, read_only=True) as wh:
        assert stored(wh.con) == before
