"""What a report, a comparison or a measure reads of one run never scans the other runs' rows unfiltered: DuckDB's
profile of every such query shows, on each scan of a table keyed by run (hit_lists, run_queries, measure_values,
answers...), a filter on that run's id, and on each scan of hit_rows (keyed by list, not run) a filter built from
the run's lists. Zone maps then skip the other runs' row groups, so the cost of reading a run stays flat however
many runs the warehouse holds (bench/history_scale.py measures it at 10, 100 and 1,000 runs).

The answer funnel (reports/answer_funnel, through the answer_attribution view) is the one query whose run filter
does not reach the hit tables; assay.present.report runs it only for a run that has answers."""

import json

import duckdb
import pytest

from assay.measures.registry import DEFAULT_MEASURES, parse_measure
from assay.runs.runner import RunOptions, run
from assay.core.sqlfiles import load_sql
from assay.store.warehouse import Warehouse
from conftest import DEMO

EXTRA = ("nDCG@5", "R@100", "RR", "P@10", "SpanIoU@1000tok", "Success@5")
REPORTS = ("run_summary", "latency", "stages", "loss_funnel", "attribution", "answer_reasons", "judge_verdicts",
           "result_unit")
FIRST_RELEVANT = ("SELECT q.query_id, MIN(j.rank) FROM eval_questions q LEFT JOIN judged_ranking j "
                  "ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.stage = 'final' AND j.level = $level "
                  "AND j.gain > 0 WHERE q.run_id = $run_id AND q.answerable GROUP BY q.query_id")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("filters") / "w.duckdb"
    with Warehouse.open(path) as wh:
        runs = [run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=size)).run_id
                for size in (300, 500)]
        runs.append(run(wh, DEMO / "corpus", DEMO / "judgments.jsonl",
                        RunOptions(chunk_size=400, generator="extractive")).run_id)
    wh = Warehouse.open(path, read_only=True)
    yield wh, runs
    wh.close()


def _scans(con, sql: str, params, tmp_path) -> list[tuple[str, str]]:
    """(table, its filters as text) of every table scan in the profile of running ``sql``."""
    out = tmp_path / "profile.json"
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{out}'")
    try:
        con.execute(sql, params).fetchall()
    finally:
        con.execute("PRAGMA disable_profiling")
    scans = []

    def walk(node):
        info = node.get("extra_info") or {}
        if (node.get("type") or node.get("operator_type")) == "TABLE_SCAN":  # DuckDB 2's key, and 1.x's
            scans.append((info.get("Table", "").split(".")[-1],
                          # without spaces: DuckDB 2 writes run_id = 'X', 1.x run_id='X'
                          json.dumps([info.get("Filters"), info.get("Dynamic Filters")]).replace(" ", "")))
        for child in node.get("children", []):
            walk(child)

    profile = json.loads(out.read_text())
    for node in profile.get("operator") or profile.get("children", []):  # DuckDB 2's top list, and 1.x's
        walk(node)
    return scans


def _queries(run_id: str):
    for measure in DEFAULT_MEASURES + tuple(parse_measure(m) for m in EXTRA):
        yield measure.name, load_sql(measure.sql), measure.params(run_id, "final")
    for name in REPORTS:
        yield f"reports/{name}", load_sql(f"reports/{name}"), {"run_id": run_id}
    for level in ("chunk", "doc"):
        yield f"first relevant ranks ({level})", FIRST_RELEVANT, {"run_id": run_id, "level": level}
    yield "stored values", "SELECT measure, unit, level, value FROM measure_values WHERE run_id = $run_id", \
        {"run_id": run_id}


# DuckDB 1.x does not push these reports' run filter down through their views to hit_lists (DuckDB 2 does): they
# read hit_lists whole, one row per run, question and stage (not hit_rows, the hits themselves)
WHOLE_ON_DUCKDB_1 = {("reports/loss_funnel", "hit_lists"), ("reports/attribution", "hit_lists")}
OLD_DUCKDB = int(duckdb.__version__.split(".")[0]) < 2


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_scan_of_a_run_keyed_table_is_filtered_to_the_run(warehouse, tmp_path):
    wh, runs = warehouse
    keyed = {t for t, in wh.con.execute(
        "SELECT DISTINCT t.table_name FROM duckdb_tables() t JOIN duckdb_columns() c ON c.table_oid = t.table_oid "
        "WHERE c.column_name = 'run_id' AND t.table_name <> 'runs'").fetchall()}
    assert {"hit_lists", "run_queries", "measure_values", "answers"} <= keyed
    problems, seen = [], set()
    for run_id in runs:
        for name, sql, params in _queries(run_id):
            for table, filters in _scans(wh.con, sql, params, tmp_path):
                seen.add(table)
                if (table in keyed and f"run_id='{run_id}'" not in filters
                        and not (OLD_DUCKDB and (name, table) in WHOLE_ON_DUCKDB_1)):
                    problems.append((name, table, filters))
                if table == "hit_rows" and "list_key" not in filters:  # a range or a set of the run's list keys
                    problems.append((name, table, filters))
    assert {"hit_lists", "hit_rows", "run_queries", "measure_values"} <= seen  # else the profile format changed
    assert not problems


def test_the_answer_funnel_is_the_exception_and_is_skipped_without_answers(warehouse, tmp_path):
    wh, runs = warehouse
    scans = _scans(wh.con, load_sql("reports/answer_funnel"), {"run_id": runs[2]}, tmp_path)
    assert any(t == "hit_lists" and f"run_id='{runs[2]}'" not in f for t, f in scans)  # still so: see report.py
    from assay.present.report import attribution

    assert "answer_funnel" in attribution(wh, runs[2]) and "answer_funnel" not in attribution(wh, runs[0])
