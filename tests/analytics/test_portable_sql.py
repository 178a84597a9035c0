"""The analytics expressions compile to SQL for DuckDB and for Spark (Ibis's PySpark dialect) with only
standard functions, so a lake read with Spark runs them unchanged. No Spark session is needed to compile."""

import pytest
import sqlglot
from sqlglot import exp

from assay.analytics import connect
from assay.analytics.history import series
from assay.analytics.pairing import paired
from assay.analytics.rollups import fusion_effect, loss_funnel
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from conftest import MINI

# what the compiled SQL may call: aggregates, CASE, COALESCE, IN, comparisons; nothing engine-specific
PORTABLE = {exp.Count, exp.Sum, exp.Min, exp.Max, exp.Coalesce, exp.Case, exp.If, exp.In, exp.Concat,
            exp.DPipe, exp.Cast, exp.Not, exp.Is, exp.And, exp.Or,
            exp.TryCast}  # sqlglot reads Spark's plain CAST as TryCast (Spark's non-ANSI CAST semantics)


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    path = tmp_path_factory.mktemp("portable") / "w.duckdb"
    with Warehouse.open(path) as w:
        a = run(w, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120)).run_id
        b = run(w, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=200)).run_id
        w.con.execute("DELETE FROM measure_values")
        # stored values, so the expressions read measure_values alone (no in-memory table)
        w.con.execute("INSERT INTO measure_values VALUES (?, 'final', 'chunk', 'q', 'nDCG@10', 'nDCG', 10, NULL, "
                      "'q', 0.5), (?, 'final', 'chunk', 'q', 'nDCG@10', 'nDCG', 10, NULL, 'q', 0.25)", [a, b])
    with Warehouse.open(path, read_only=True) as w:
        yield w, a, b


def _expressions(w, a, b):
    con = connect(w)
    ndcg = parse_measure("nDCG@10")
    return {"pairing": paired(w, con, a, b, [ndcg], slices=True),
            "history": series(w, con, [a, b], ndcg, "chunk", "form=gap"),
            "loss_funnel": loss_funnel(con, [a, b]), "fusion_effect": fusion_effect(con, [a, b])}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("name", ["pairing", "history", "loss_funnel", "fusion_effect"])
def test_compiles_for_duckdb_and_spark_with_standard_functions(wh, name):
    import ibis

    ibis.pyspark  # noqa: B018  registers the PySpark backend's compile options; starts no session
    expr = _expressions(*wh)[name]
    for dialect, read in (("duckdb", "duckdb"), ("pyspark", "spark")):
        sql = ibis.to_sql(expr, dialect=dialect)
        tree = sqlglot.parse_one(str(sql), read=read)
        used = {type(f) for f in tree.find_all(exp.Func)}
        assert used <= PORTABLE, (dialect, used - PORTABLE)
        assert "measure_values" in str(sql) or name in ("loss_funnel", "fusion_effect")


def test_the_pairing_reads_the_tables_by_their_warehouse_names(wh):
    import ibis

    ibis.pyspark  # noqa: B018
    sql = str(ibis.to_sql(_expressions(*wh)["pairing"], dialect="pyspark"))
    assert "`measure_values`" in sql and "`eval_questions`" in sql and "UNION ALL" in sql
