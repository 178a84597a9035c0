"""A BM25 stage's hits kept as columns (assay.retrieval.ranking.Ranking) from the search to the warehouse: a
Ranking reads as the list of hits it stands for, and a run written from columns stores exactly the rows (list keys,
ranks, chunk keys, scores bit for bit, lists read from their input) that the same run written from plain hit rows
stores, without a Hit being made."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from assay.store.hits import RunHits
from assay.retrieval import Hit
from assay.retrieval.ranking import ChunkTable, Ranking, doc_ids
from assay.runs.runner import RunOptions, execute_run
from assay.store.warehouse import Warehouse

TABLE = ChunkTable(["a#0-1", "b#0-1", "c#0-1", "c#1-2"], ["a", "b", "c", "c"])


def test_a_ranking_reads_as_the_list_of_hits_it_stands_for():
    ranking = Ranking(TABLE, [2, 0, 3], [2.5, 1.0, -0.0])
    hits = [Hit("c#0-1", "c", 2.5), Hit("a#0-1", "a", 1.0), Hit("c#1-2", "c", -0.0)]
    assert list(ranking) == hits and ranking == hits and hits == ranking and len(ranking) == 3
    assert [ranking[i] for i in (0, 1, 2, -1)] == hits + hits[-1:]
    assert all(type(h) is Hit for h in ranking) and ranking[0].chunk_id == "c#0-1" and ranking[-1].score == 0.0
    with pytest.raises(IndexError):
        ranking[3]
    cut = ranking[:2]
    assert isinstance(cut, Ranking) and cut.table is TABLE and cut == hits[:2] and ranking[5:] == []
    assert doc_ids(ranking) == ranking.doc_ids() == ["c", "a", "c"] == doc_ids(hits)
    assert ranking != hits[:2] and ranking != [Hit("c#0-1", "c", 2.5), Hit("a#0-1", "a", 1.0), Hit("c#1-2", "c", 1.0)]
    assert ranking == Ranking(TABLE, [2, 0, 3], [2.5, 1.0, -0.0]) != Ranking(TABLE, [2, 0, 3], [2.5, 1.0, 1.0])
    assert ranking != "c#0-1" and ranking != 3


def test_run_hits_read_as_the_rows_they_stand_for():
    hits = RunHits()
    hits.add("q1", "bm25", Ranking(TABLE, [1, 2], [3.0, 2.0]))
    hits.add("q1", "final", Ranking(TABLE, [1], [3.0]))
    hits.add("q2", "bm25", [Hit("x#0-3", "x", 1.5)])
    hits.add("q3", "bm25", Ranking(TABLE, [], []))
    rows = [("q1", "bm25", 1, "b#0-1", "b", 3.0), ("q1", "bm25", 2, "c#0-1", "c", 2.0),
            ("q1", "final", 1, "b#0-1", "b", 3.0), ("q2", "bm25", 1, "x#0-3", "x", 1.5)]
    assert list(hits) == rows and len(hits) == 4 and hits[3] == rows[3] and hits == rows
    assert hits + [("q9",)] == rows + [("q9",)] and sorted(hits) == sorted(rows)
    hits.append(rows[0])  # changed: from now on it is its rows
    assert hits.lists() is None and list(hits) == rows + rows[:1]
    hits.add("q4", "bm25", [Hit("y#0-1", "y", 0.5)])
    assert hits[-1] == ("q4", "bm25", 1, "y#0-1", "y", 0.5)


def stored(path, run_id: str) -> dict:
    """Every stored row a run's hits make, scores as their 8 bytes: hit_rows with their chunks, hit_lists, and the
    chunk keys of its chunk set."""
    with Warehouse.open(path, read_only=True) as wh:
        con = wh.con
        rows = con.execute(
            "SELECT h.list_key, h.rank, h.chunk_key, k.chunk_id, k.doc_id, h.score FROM hit_rows h "
            "JOIN chunk_keys k USING (chunk_key) ORDER BY h.list_key, h.rank").fetchall()
        return {
            "rows": [(*r[:-1], struct.pack("<d", r[-1])) for r in rows],
            "lists": con.execute("SELECT run_id, query_id, stage, list_key, through_rank FROM hit_lists "
                                 "ORDER BY ALL").fetchall(),
            "keys": con.execute("SELECT chunk_key, chunk_set, chunk_id, doc_id FROM chunk_keys ORDER BY ALL").fetchall(),
            "hits": [(*r[:-1], struct.pack("<d", r[-1])) for r in con.execute(
                "SELECT query_id, stage, rank, chunk_id, doc_id, score FROM hits WHERE run_id = ? ORDER BY ALL",
                [run_id]).fetchall()],
        }


@pytest.mark.parametrize("options", [
    RunOptions(chunk_size=120),  # final reads bm25's rows
    RunOptions(chunk_size=120, final_k=2, depth=5),  # final cut: reads bm25's first rows
    RunOptions(chunker="document", depth=3, doc_depth=6),  # deepened past depth until six documents
    RunOptions("hybrid", chunk_size=120, depth=4),  # bm25 as columns beside dense and fusion hits
], ids=["bm25", "cut", "deepened", "hybrid"])
@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_written_from_columns_stores_what_its_hit_rows_store(tmp_path, mini_corpus, mini_judgments, options):
    record = execute_run(mini_corpus, mini_judgments, options)
    assert isinstance(record.hits, RunHits)
    lists = record.hits.lists()
    assert any(isinstance(h, Ranking) for _, stage, h in lists if stage == "bm25")
    rows = list(record.hits)
    with Warehouse.open(tmp_path / "columns.duckdb") as wh:
        wh.write_run(record)
    with Warehouse.open(tmp_path / "rows.duckdb") as wh:
        wh.write_run(replace(record, hits=rows))  # plain rows: grouped and looked up hit by hit, as before
    columns = stored(tmp_path / "columns.duckdb", record.run_id)
    assert columns == stored(tmp_path / "rows.duckdb", record.run_id)
    assert columns["hits"] == sorted((*r[:-1], struct.pack("<d", r[-1])) for r in rows)
    assert len(columns["rows"]) < len(rows)  # final is read from its input's rows, not stored again


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_bm25_run_is_written_without_making_a_hit(tmp_path, mini_corpus, mini_judgments, monkeypatch):
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    expected = list(record.hits)

    def made(*args):
        raise AssertionError("a Hit was made from a ranking's columns")

    monkeypatch.setattr(Ranking, "__iter__", made)
    monkeypatch.setattr(Ranking, "__getitem__", made)
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        wh.write_run(record)
    monkeypatch.undo()
    assert stored(tmp_path / "w.duckdb", record.run_id)["hits"] == sorted(
        (*r[:-1], struct.pack("<d", r[-1])) for r in expected)


def test_a_list_given_twice_for_one_question_and_stage_is_refused(tmp_path, mini_corpus, mini_judgments):
    from assay.core.errors import WarehouseError

    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    query_id, stage, first = record.hits.lists()[0]
    record.hits.add(query_id, stage, first)
    with Warehouse.open(tmp_path / "w.duckdb") as wh, pytest.raises(
            WarehouseError, match=f"duplicate hit at rank 1 of stage {stage} for question {query_id}"):
        wh.write_run(record)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_ranking_over_another_table_is_written_by_its_chunks(tmp_path, mini_corpus, mini_judgments):
    """A ranking whose table is not the run's first index's (a second index) is written by the chunks it names,
    not by its positions taken as the first table's."""
    record = execute_run(mini_corpus, mini_judgments, RunOptions(chunk_size=120))
    (query_id, stage, first), rest = record.hits.lists()[0], record.hits.lists()[1:]
    table = ChunkTable(first.table.chunk_ids[::-1], first.table.doc_ids[::-1])
    last = len(table) - 1
    moved = Ranking(table, [last - p for p in first.positions], list(first.scores))  # the same hits
    assert moved == first and moved.positions != first.positions
    with Warehouse.open(tmp_path / "a.duckdb") as wh:
        wh.write_run(record)
    with Warehouse.open(tmp_path / "b.duckdb") as wh:
        wh.write_run(replace(record, hits=RunHits([(query_id, stage, moved), *rest])))
    assert stored(tmp_path / "a.duckdb", record.run_id) == stored(tmp_path / "b.duckdb", record.run_id)
