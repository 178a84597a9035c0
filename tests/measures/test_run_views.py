"""store_values computes the views a run's measures share once (metrics.values.run_views): the values stored equal
each measure's SQL over the plain views, bit for bit, for every run of a warehouse holding several; the temporary
tables hold exactly the views' rows for the run and stage, and none is left behind, also after an error."""

from __future__ import annotations

import pytest

from assay.measures.compute import per_query
from assay.measures.registry import DEFAULT_MEASURES, parse_measure
from assay.measures.values import RUN_VIEWS, run_views, stored_values
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse


def temporary_tables(wh) -> list[str]:
    return [t for t, in wh.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    from conftest import MINI

    path = tmp_path_factory.mktemp("views") / "w.duckdb"
    ids = [run(Warehouse.brief(path), MINI / "corpus", MINI / "judgments.jsonl", options).run_id
           for options in (RunOptions(chunk_size=120), RunOptions("hybrid", chunk_size=80, final_k=3))]
    return path, ids


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_stored_values_equal_each_measure_over_the_plain_views(two_runs):
    path, ids = two_runs
    with Warehouse.open(path, read_only=True) as wh:
        assert temporary_tables(wh) == []
        for run_id in ids:
            for measure in {m.name: m for m in DEFAULT_MEASURES}.values():
                plain = {key: v for key, v in per_query(wh, run_id, measure).items() if key[1] in measure.levels}
                assert stored_values(wh, run_id, measure) == plain, (run_id, measure.name)


@pytest.mark.parametrize("stage", ["final", "bm25", "fusion"])
def test_inside_the_tables_hold_the_views_rows_for_the_run_and_stage(two_runs, stage):
    path, ids = two_runs
    with Warehouse.open(path) as wh, wh.transaction():
        for run_id in ids:
            expected = {}
            for view, staged in RUN_VIEWS:
                where, params = ("run_id = ? AND stage = ?", [run_id, stage]) if staged else ("run_id = ?", [run_id])
                expected[view] = sorted(wh.con.execute(f"SELECT * FROM {view} WHERE {where}", params).fetchall(),
                                        key=repr)
            assert sum(map(len, expected.values())) > 0
            with run_views(wh, run_id, stage):
                assert sorted(temporary_tables(wh)) == sorted(v for v, _ in RUN_VIEWS)
                for view, _ in RUN_VIEWS:
                    assert sorted(wh.con.execute(f"SELECT * FROM {view}").fetchall(), key=repr) == expected[view], view
            assert temporary_tables(wh) == []


def test_an_error_inside_leaves_no_table(two_runs):
    path, ids = two_runs
    with Warehouse.open(path) as wh, wh.transaction():
        with pytest.raises(ZeroDivisionError), run_views(wh, ids[0], "final"):
            1 / 0
        assert temporary_tables(wh) == []
        measure = parse_measure("nDCG@10")
        with run_views(wh, ids[0], "final"):  # and they can be made again in the same transaction
            inside = per_query(wh, ids[0], measure)
        assert inside == per_query(wh, ids[0], measure)
