"""A question id may hold '|' (a unit of an answer measure is 'query_id|claim|cite'): every measure's values are
sliced by their own question's labels, and a run with such ids is written and reported (before, the label was
looked up under the part before the first '|' and a report of such a run failed with a KeyError)."""

from __future__ import annotations

import pytest

from assay.inputs.chunking import Chunk
from assay.measures.compute import evaluate, question_of
from assay.store.warehouse import Warehouse
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic


def test_the_question_of_a_unit():
    questions = {"q", "q|1", "a|b|c"}
    assert question_of("q|1", questions) == "q|1"  # a question's own id, '|' and all
    assert question_of("q", questions) == "q"
    assert question_of("q|1|0|2", questions) == "q|1"  # a citation of question q|1: the longest known prefix
    assert question_of("q|7|0", questions) == "q"
    assert question_of("a|b|c|0|1", questions) == "a|b|c"
    with pytest.raises(KeyError, match="'z|1'"):
        question_of("z|1", questions)


def test_a_run_whose_question_ids_hold_a_bar_is_written_and_reported(tmp_path):
    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q|1", [("d0.md", None, None, 1)], [chunk.chunk_id], category="found"))
    syn.queries.append(QuerySpec("q", [("d0.md", None, None, 1)], [], category="missed"))
    syn.queries.append(QuerySpec("r|1", [("d0.md", None, None, 1)], [chunk.chunk_id], category="found"))
    with Warehouse.open(tmp_path / "s.duckdb") as wh:
        write_synthetic(wh, syn, run_id="s")
        rows = {(r.metric, r.level, r.slice): r for r in evaluate(wh, "s")}
    assert (rows[("Success@1", "doc", "all")].value, rows[("Success@1", "doc", "all")].n) == (2 / 3, 3)
    # each question under its own labels: q|1 in "found" with r|1, not in q's "missed"
    assert (rows[("Success@1", "doc", "category=found")].value, rows[("Success@1", "doc", "category=found")].n) == (1, 2)
    assert (rows[("Success@1", "doc", "category=missed")].value, rows[("Success@1", "doc", "category=missed")].n) == (0, 1)


def test_exports_and_slices_name_a_bar_holding_question_whole(tmp_path):
    from assay.analytics.direct import _labels_of
    from assay.present.export import _per_query_metrics
    from assay.measures.registry import parse_measure

    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q|1", [("d0.md", None, None, 1)], [chunk.chunk_id], category="found"))
    syn.queries.append(QuerySpec("q", [("d0.md", None, None, 1)], [], category="missed"))
    with Warehouse.open(tmp_path / "s.duckdb") as wh:
        write_synthetic(wh, syn, run_id="s")
        rows = _per_query_metrics(wh, {"run_id": "s"}, (parse_measure("Success@1"),))
        stored = wh.con.execute("SELECT DISTINCT query_id, unit FROM measure_values WHERE run_id = 's' "
                                "ORDER BY unit").fetchall()
    assert sorted({(r[1], r[5]) for r in rows}) == [("q", "q"), ("q|1", "q|1")] == stored
    labels = {"q": {"category": "missed"}, "q|1": {"category": "found"}}
    assert _labels_of("q|1", labels) == {"category": "found"}
    assert _labels_of("q|1|0|1", labels) == {"category": "found"}  # a citation of q|1
    assert _labels_of("z", labels) is None
