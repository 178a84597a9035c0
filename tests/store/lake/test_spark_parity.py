"""One lake, two engines: every standard measure gives the same value for every question on DuckDB and on
Apache Spark (local mode, a real JVM), from the same SQL files (transpiled for Spark by sqlglot).

The lake holds the demo's runs, written by `assay run --lake` (BM25; --chunk-size 400; --chunker document;
--pipeline dense with the offline model; BM25 with the extractive answer stage, so the answer measures have
rows). When ../shared/collections/scifact exists, an imported SciFact run copied from a warehouse into a lake of
its own (`assay run --lake` reads no warehouse, so no @collection: `copy_run` writes the same layout) is scored
alike on nDCG@10.

Never skipped: Spark must run here. It needs Java 17 (`java` on PATH or JAVA_HOME) and pyspark from
requirements-test.lock; without them the engine raises ConfigError saying what to install, and the test fails.
"""

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.store.lake import PARTITION_FILE, RUN_TABLES, SHARED_KEYS, open_lake, partition_dir
from assay.store.lake.reader import visible_runs
from assay.measures.registry import DEFAULT_MEASURES
from conftest import SPARK_MASTER

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "judgments" / "demo"
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact"
ANSWERED = ["--generator", "extractive"]  # the first run's lists, and answers
DEMO_RUNS = ([], ["--chunk-size", "400"], ["--chunker", "document"], ["--pipeline", "dense"], ANSWERED)
COMPARED = ([], ["--chunker", "document"], ["--pipeline", "dense"])  # the runs each ranking measure is compared on
TOLERANCE = 1e-12

pytestmark = pytest.mark.slow  # a JVM, and five demo runs (one dense) written to the lake first


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


# The rows of a shared table one run needs, as `assay.store.lake.writer` selects them from its in-memory warehouse.
SHARED_ROWS = {
    "corpora": "t.corpus_hash = r.corpus_hash",
    "documents": "t.corpus_hash = r.corpus_hash",
    "document_pages": "t.corpus_hash = r.corpus_hash",
    "chunk_sets": "t.chunk_set = r.chunk_set",
    "chunks": "t.chunk_set = r.chunk_set",
    "judgment_sets": "t.judgments_hash = r.judgments_hash",
    "queries": "t.judgments_hash = r.judgments_hash",
    "judgment_gold": "t.judgments_hash = r.judgments_hash",
    "gold_spans": "t.judgments_hash = r.judgments_hash AND t.corpus_hash = r.corpus_hash",
    "tokenizers": "t.tokenizer_id = r.tokenizer_id",
    "doc_tokens": ("t.tokenizer_id = r.tokenizer_id AND t.corpus_hash = r.corpus_hash "
                   "AND t.doc_id IN (SELECT h.doc_id FROM hits h WHERE h.run_id = r.run_id)"),
    "chunk_tokens": "t.tokenizer_id = r.tokenizer_id AND t.chunk_set = r.chunk_set",
    "interval_memo": "FALSE",  # a warehouse's memo is not kept per run: the copy is a run without one
}
assert set(SHARED_ROWS) == set(SHARED_KEYS)


def copy_run(warehouse: Path, run_id: str, lake: Path) -> None:
    """A warehouse run as its own partitions of the lake (the layout of `assay.store.lake`), `runs` last."""
    import pyarrow.parquet as pq

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        tables = [t for t in RUN_TABLES if t != "runs" and t in present] + list(SHARED_ROWS) + ["runs"]
        for table in tables:
            if table in SHARED_ROWS:
                sql = f"SELECT r.run_id, t.* FROM {table} t, runs r WHERE r.run_id = ? AND {SHARED_ROWS[table]}"
            else:
                sql = f"SELECT * FROM {table} WHERE run_id = ?"
            data = con.execute(sql, [run_id]).to_arrow_table()
            if data.num_rows:
                target = partition_dir(lake, table, run_id)
                target.mkdir(parents=True)
                pq.write_table(data, target / PARTITION_FILE)
    finally:
        con.close()


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    base = tmp_path_factory.mktemp("spark-parity")
    lake = base / "lake"
    demo = [invoke("run", "--lake", lake, "--corpus", DEMO / "corpus", "--judgments", DEMO / "judgments.jsonl", *extra)
            for extra in DEMO_RUNS]  # run ids, in DEMO_RUNS' order
    return lake, demo


@pytest.fixture(scope="module")
def scifact_lake(tmp_path_factory):
    """A lake of its own holding one imported SciFact run: in the demo's lake, the views every measure reads,
    cached for every run, would hold SciFact's too (~50 s of Spark a measure, and a 1 GB heap run out on CI)."""
    if not SCIFACT.is_dir():
        pytest.skip(f"{SCIFACT} (shared collections) is missing: SciFact is compared where they are present")
    base = tmp_path_factory.mktemp("spark-parity-scifact")
    warehouse = base / "scifact.duckdb"
    invoke("import", "beir", SCIFACT, "--warehouse", warehouse)
    scifact = invoke("run", "--warehouse", warehouse, "--corpus", "@scifact", "--judgments", "@scifact/test",
                     "--chunker", "document")
    copy_run(warehouse, scifact, base / "lake")
    return base / "lake", scifact


@pytest.fixture(scope="module")
def engines(lake, spark_root):
    directory = lake[0]
    duck = open_lake(directory)
    spark = open_lake(directory, engine="spark", spark_master=SPARK_MASTER)  # a child of conftest's session
    spark.cache_views()  # as `lake compute` does: each view computed once for every run (half the CPU a query)
    yield duck, spark
    spark.close()
    duck.close()


def per_question(engine, run_id: str, measure) -> dict[tuple, float]:
    """{every column but value: value} for each row the measure's SQL returns for the run's final stage."""
    if measure.family.levels in (("answer",), ("query",)):
        columns, rows = engine.query(measure.family.sql, run_id=run_id)
    else:
        columns, rows = engine.query(measure.sql, **measure.params(run_id, "final"))
    at = columns.index("value")
    values = {tuple(v for i, v in enumerate(row) if i != at): float(row[at]) for row in rows}
    assert len(values) == len(rows), f"{measure}: two rows for one question"
    return values


def test_both_engines_see_every_run(lake, engines):
    directory, demo = lake
    duck, spark = engines
    expected = sorted(visible_runs(directory))
    assert expected == sorted(demo)
    for engine in (duck, spark):
        assert sorted(r[0] for r in engine.con.execute("SELECT run_id FROM complete_runs").fetchall()) == expected
    assert spark.resolve_run_id("latest") == duck.resolve_run_id("latest")
    # the answered run ranks what the first run ranks (why the measure comparison leaves it out)
    lists = ("SELECT stage, query_id, rank, chunk_id, score FROM hits WHERE run_id = ? "
             "ORDER BY stage, query_id, rank")
    first, answered = demo[0], demo[DEMO_RUNS.index(ANSWERED)]
    assert duck.con.execute(lists, [answered]).fetchall() == duck.con.execute(lists, [first]).fetchall() != []
    assert spark.resolve_run_id(expected[0][:-2]) == expected[0]


@pytest.mark.parametrize("measure", DEFAULT_MEASURES, ids=lambda m: m.name)
def test_measure_is_equal_per_question_on_duckdb_and_spark(lake, engines, measure):
    """Each Spark query costs seconds of CPU, so each measure is compared on the demo runs whose rows differ in kind:
    an answer measure on the answered run and on one without answers (no rows on either engine); any other measure
    on the BM25 run, the whole-document run and the dense run (not the answered run, whose ranked lists are the
    first run's, nor the 400-character run, the first with smaller chunks: both are in the history test below).
    The SciFact run, where the shared collections are present, is compared in a lake of its own below."""
    _, demo = lake
    answered = demo[DEMO_RUNS.index(ANSWERED)]
    duck, spark = engines
    run_ids = [demo[DEMO_RUNS.index(extra)] for extra in COMPARED]
    if measure.family.levels == ("answer",):
        run_ids = [answered, demo[0]]
    compared = 0
    for run_id in run_ids:
        spark_values, duck_values = per_question(spark, run_id, measure), per_question(duck, run_id, measure)
        assert spark_values.keys() == duck_values.keys(), f"{measure} on {run_id}: different questions"
        for key, value in duck_values.items():
            assert abs(spark_values[key] - value) <= TOLERANCE, f"{measure} on {run_id} {key}: " \
                f"duckdb {value!r}, spark {spark_values[key]!r}"
        compared += len(duck_values)
    if measure.family.name != "judged_faithfulness":  # needs a judge model, which no run here calls
        assert compared > 0, f"{measure}: no run of the lake has a value to compare"


def test_scifact_run_is_in_the_lake_and_scored_alike(scifact_lake, spark_root):
    directory, scifact = scifact_lake
    measure = next(m for m in DEFAULT_MEASURES if m.name == "nDCG@10")
    with open_lake(directory) as duck, open_lake(directory, engine="spark", spark_master=SPARK_MASTER) as spark:
        assert spark.resolve_run_id("latest") == duck.resolve_run_id("latest") == scifact
        on_duck, on_spark = per_question(duck, scifact, measure), per_question(spark, scifact, measure)
    assert len([k for k in on_duck if k[1] == "doc"]) == 300
    assert on_spark == pytest.approx(on_duck, abs=TOLERANCE)


def test_history_marks_the_same_unfilled_budgets_on_duckdb_and_spark(engines):
    """`lake history --engine spark` reads the tokens each list holds with the same SQL (reports/budget_tokens),
    so each point says the same about its budget: here BM25's chunk 800 and 400 runs."""
    from assay.measures import fill
    from assay.verdicts.regression import history

    duck, spark = engines
    on_duck, on_spark = (history(engine, "bm25", "SpanRecall@4000tok", None) for engine in (duck, spark))
    marks = [[{f: p[f] for f in ("run_id", *fill.FIELDS)} for p in h["points"]] for h in (on_duck, on_spark)]
    assert marks[0] and marks[0] == marks[1]
    assert any(fill.unfilled(p) for p in on_duck["points"])


def test_lake_compute_gives_the_same_means_to_the_bit_on_duckdb_and_spark(engines):
    """`lake compute`: stored values read in one query on both engines (nDCG@10, SpanRecall@1000tok), a measure no
    run stored (P@3) computed by its SQL on the cached views; every mean equal, not only within a tolerance."""
    from assay.measures.registry import parse_measure
    from assay.measures.run_means import run_means

    duck, spark = engines
    measures = [parse_measure(name) for name in ("nDCG@10", "SpanRecall@1000tok", "P@3")]
    on_duck = run_means(duck, measures)
    assert {r["metric"] for r in on_duck if r["n"]} == {"nDCG@10", "SpanRecall@1000tok", "P@3"}
    assert run_means(spark, measures) == on_duck
