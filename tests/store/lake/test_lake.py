"""The lake: runs written as their own partitions (concurrently, atomically) and read with DuckDB as a warehouse
is read. Real subprocesses, real Parquet files, a real DuckDB warehouse to compare against."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.values import score_run
from assay.store.lake import LAKE_TABLES, SHARED_KEYS, open_lake, partition_dir
from assay.store.lake.reader import visible_runs
from assay.store.lake.writer import PAUSE_VAR, memory_warehouse, tables_of, write_run
from assay.present.run_list import FIELDS
from assay.runs.runner import RunOptions, execute_run
from assay.store.warehouse import Warehouse
from assay.runs.sinks import store_run

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "judgments" / "demo"
MINI = ROOT / "tests" / "fixtures" / "mini"
ASSAY = [sys.executable, "-m", "assay"]
# every table a plain BM25 run has rows in (answer tables only with an answer stage)
RUN_WRITES = {"runs", "run_queries", "hits", "run_stages", "stage_latency", "measure_values", "interval_memo"}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def lake_run_argv(lake, *extra, corpus=MINI / "corpus", judgments=MINI / "judgments.jsonl"):
    return ASSAY + ["run", "--lake", str(lake), "--corpus", str(corpus), "--judgments", str(judgments), *extra]


@pytest.fixture(scope="module")
def demo_records():
    """Two demo runs of one pipeline (the second with smaller chunks), computed once."""
    return [execute_run(DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=size))
            for size in (800, 400)]


@pytest.fixture(scope="module")
def both(demo_records, tmp_path_factory):
    """The same two runs written into a warehouse file and into a lake."""
    base = tmp_path_factory.mktemp("both")
    wh_path, lake = base / "w.duckdb", base / "lake"
    with Warehouse.open(wh_path) as wh:
        for record in demo_records:
            store_run(wh, record)
    for record in demo_records:
        write_run(lake, record, score=score_run)
    return wh_path, lake, [r.run_id for r in demo_records]


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_four_concurrent_lake_runs_write_four_complete_partitions(tmp_path):
    lake = tmp_path / "lake"
    procs = [subprocess.Popen(lake_run_argv(lake, "--chunk-size", str(100 + 20 * i)), cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outs]
    run_ids = [out.strip() for out, _ in outs]
    assert len(set(run_ids)) == 4 and sorted(run_ids) == visible_runs(lake)
    for run_id in run_ids:
        have = {t for t in LAKE_TABLES if (partition_dir(lake, t, run_id) / "part-0.parquet").is_file()}
        assert have == RUN_WRITES, run_id
    assert not [p.name for p in lake.iterdir() if p.name.startswith(".")]  # no staging directory left behind
    # four writers at once on one new corpus: one copy of it, of its judgments and of their tokens
    for table in ("corpora", "documents", "queries", "gold_spans", "doc_tokens"):
        assert len(list((lake / "_shared" / table).iterdir())) == 1, table
    assert len(list((lake / "_shared" / "chunks").iterdir())) == 4  # four chunk sizes
    assert not (tmp_path / "warehouse").exists()  # no warehouse touched
    with open_lake(lake) as reader:
        assert sorted(r[0] for r in reader.con.execute("SELECT run_id FROM complete_runs").fetchall()) == sorted(run_ids)
        counts = dict(reader.con.execute("SELECT run_id, COUNT(*) FROM run_queries GROUP BY run_id").fetchall())
        assert counts == {run_id: 6 for run_id in run_ids}
        # shared rows repeat in each partition and are read once
        assert reader.con.execute("SELECT COUNT(*) FROM documents").fetchall() == [(4,)]
        assert reader.con.execute("SELECT COUNT(*) FROM queries").fetchall() == [(6,)]
    listed = invoke("lake", "runs", lake)
    assert listed.exit_code == 0 and all(run_id in listed.output for run_id in run_ids)
    assert listed.output.splitlines()[0].split()[:4] == ["run", "started", "status", "kind"]
    as_json = json.loads(invoke("lake", "runs", lake, "--format", "json").output)
    assert sorted(r["run_id"] for r in as_json) == sorted(run_ids)
    assert {r["kind"] for r in as_json} == {"run"} and tuple(as_json[0]) == FIELDS  # the warehouse listing's columns


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_writer_killed_before_its_runs_partition_leaves_no_visible_run(tmp_path):
    lake = tmp_path / "lake"
    proc = subprocess.Popen(lake_run_argv(lake), cwd=tmp_path, env={**os.environ, PAUSE_VAR: "60"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list((lake / "hits").glob("run_id=*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = list((lake / "hits").glob("run_id=*"))
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert killed and proc.returncode == -signal.SIGKILL
    assert visible_runs(lake) == []  # the hits are there, but the run is not, so nothing reads them
    with open_lake(lake) as reader:
        assert reader.con.execute("SELECT COUNT(*) FROM hits").fetchall() == [(0,)]
        assert reader.con.execute("SELECT COUNT(*) FROM runs").fetchall() == [(0,)]
    assert invoke("lake", "runs", lake).output == "no runs yet\n"
    # the next writer is not disturbed by what the killed one left
    out = subprocess.run(lake_run_argv(lake), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    with open_lake(lake) as reader:
        assert reader.con.execute("SELECT run_id FROM runs").fetchall() == [(out.stdout.strip(),)]
        assert reader.con.execute("SELECT DISTINCT run_id FROM hits").fetchall() == [(out.stdout.strip(),)]


def test_every_lake_table_has_the_warehouse_columns_and_rows(both):
    wh_path, lake, run_ids = both
    with Warehouse.open(wh_path, read_only=True) as wh, open_lake(lake) as reader:
        for table in LAKE_TABLES:
            described = "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? " \
                        "ORDER BY ordinal_position"
            columns = wh.con.execute(described, [table]).fetchall()
            assert reader.con.execute(described, [table]).fetchall() == columns, table
            names = [c for c, kind in columns if kind != "TIMESTAMP"]  # written at different instants
            select = f"SELECT {', '.join(names)} FROM {table} ORDER BY ALL"
            assert reader.con.execute(select).fetchall() == wh.con.execute(select).fetchall(), table


def test_hive_partitioning_reads_the_run_id_in_the_file_once(both):
    _, lake, run_ids = both
    con = duckdb.connect()
    files = str(lake / "hits" / "*" / "*.parquet")
    with_hive = con.execute("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = true)", [files]).fetchall()
    without = con.execute("DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false)", [files]).fetchall()
    assert [r[0] for r in with_hive] == [r[0] for r in without] and [r[0] for r in with_hive].count("run_id") == 1
    rows = con.execute("SELECT DISTINCT run_id, filename FROM read_parquet(?, hive_partitioning = true, "
                       "filename = true)", [files]).fetchall()
    assert sorted(r[0] for r in rows) == sorted(run_ids) and all(f"run_id={r}" in f for r, f in rows)
    shared = con.execute("SELECT DISTINCT run_id FROM read_parquet(?)",
                         [str(lake / "_shared" / "documents" / "*.parquet")]).fetchall()
    assert shared == [(run_ids[0],)]  # a shared part names the run that wrote it: the first on its corpus


@pytest.mark.parametrize("args", [
    ["report", "--format", "json"],
    ["report", "{a}", "--format", "json"],
    ["report", "{a}", "{b}", "--format", "json"],
    ["report", "{b}", "-m", "nDCG@10", "-m", "SpanRecall@1000tok", "--format", "csv"],
    ["history", "--pipeline", "bm25", "--metric", "nDCG@10", "--format", "json"],
    ["history", "--pipeline", "bm25", "--metric", "SpanRecall@4000tok"],
    ["history", "--pipeline", "bm25", "--metric", "SpanRecall@1000tok", "--format", "json"],
    ["gate", "--rule", "Success@3:doc>=0.75", "--rule", "nDCG@10>=0.9"],
    ["regress", "--max-drop", "Success@1=0.01", "--max-drop", "nDCG@10:doc=0.01", "--format", "json"],
])
def test_the_lake_gives_the_warehouse_answers(both, args):
    wh_path, lake, (a, b) = both
    args = [x.format(a=a, b=b) for x in args]
    from_warehouse = invoke(args[0], *args[1:], "--warehouse", wh_path)
    from_lake = invoke("lake", args[0], lake, *args[1:])
    assert from_lake.exit_code == from_warehouse.exit_code and from_lake.output == from_warehouse.output
    assert from_lake.output.strip()


def test_lake_compute_prints_each_runs_means(both):
    wh_path, lake, (a, b) = both
    out = invoke("lake", "compute", lake, "-m", "nDCG@10", "--format", "json")
    assert out.exit_code == 0
    rows = json.loads(out.output)
    assert [(r["run_id"], r["level"]) for r in rows] == [(a, "chunk"), (a, "doc"), (b, "chunk"), (b, "doc")]
    report = json.loads(invoke("report", b, "-m", "nDCG@10", "--format", "json", "--warehouse", wh_path).output)
    want = {m["level"]: m["value"] for m in report["metrics"] if m["slice"] == "all"}
    assert {r["level"]: r["value"] for r in rows if r["run_id"] == b} == pytest.approx(want, abs=1e-12)


def test_a_lake_run_keeps_its_intervals_and_history_reads_them(both):
    """Each run's partitions hold the intervals its report stored (interval_memo, one row per key for a reader):
    every history point's interval over the lake is one of them, so history bootstraps nothing again."""
    from assay.measures import memo
    from assay.measures.compute import per_query
    from assay.measures.registry import parse_measure
    from assay.verdicts.regression import SAMPLES, history

    _, lake, run_ids = both
    measure = parse_measure("nDCG@10")
    with open_lake(lake) as reader:
        points = history(reader, "bm25", "nDCG@10", "chunk")["points"]
        seeds = dict(reader.con.execute("SELECT run_id, seed FROM runs").fetchall())
        for point in points:
            values = per_query(reader, point["run_id"], measure)
            ordered = [v for (_, level), v in sorted(values.items()) if level == "chunk"]
            key = memo.memo_key(ordered, measure.family.interval, seeds[point["run_id"]], SAMPLES)
            assert memo.recall(reader, [key]) == {key: (point["ci_low"], point["ci_high"])}
    assert sorted(p["run_id"] for p in points) == sorted(run_ids)


def test_lake_compute_reads_stored_values_and_computes_the_rest_to_the_same_bit(both, tmp_path):
    """Values stored with a run are read (one query for every run), not computed again: a stored value changed
    on disk is what compute reports. A measure no run stored (P@3) is computed by its SQL, and a mean is the same
    to the bit whether it is read or computed."""
    import shutil

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from assay.measures.registry import parse_measure
    from assay.measures.run_means import run_means, stored_final_values

    _, source, (a, b) = both
    lake = tmp_path / "lake"
    shutil.copytree(source, lake)
    measures = [parse_measure("nDCG@10"), parse_measure("P@3")]
    with open_lake(lake) as reader:
        stored = stored_final_values(reader, measures)
        assert {key for key in stored} == {(a, "nDCG@10"), (b, "nDCG@10")}  # P@3 is not a default measure
        read = run_means(reader, measures)
        computed = run_means(reader, measures[:1])  # the same pairs, read
        from assay.measures.compute import per_query
        for run_id in (a, b):  # computing nDCG@10 by its SQL gives the same means, bit for bit
            values = per_query(reader, run_id, measures[0])
            for level in ("chunk", "doc"):
                vals = [v for (_, lvl), v in sorted(values.items()) if lvl == level]
                row = next(r for r in read if (r["run_id"], r["metric"], r["level"]) == (run_id, "nDCG@10", level))
                assert row["value"] == sum(vals) / len(vals) and row["n"] == len(vals)
    assert [r for r in read if r["metric"] == "nDCG@10"] == computed
    assert {r["metric"] for r in read if r["value"] is not None} == {"nDCG@10", "P@3"}
    # the stored values are what compute reads: set run b's to 0.25 on disk
    part = partition_dir(lake, "measure_values", b) / "part-0.parquet"
    table = pq.read_table(part)
    values = pc.if_else(pc.equal(table["measure"], "nDCG@10"), 0.25, table["value"])
    pq.write_table(table.set_column(table.schema.get_field_index("value"), "value", values), part)
    out = invoke("lake", "compute", lake, "-m", "nDCG@10", "--format", "json")
    assert out.exit_code == 0, out.output
    assert {r["value"] for r in json.loads(out.output) if r["run_id"] == b} == {0.25}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_failed_run_is_written_to_the_lake_with_its_status_and_exits_8(tmp_path, monkeypatch):
    monkeypatch.delenv("ASSAY_LAKE_NO_KEY", raising=False)
    lake = tmp_path / "lake"
    out = subprocess.run(lake_run_argv(lake, "--generator", "openai", "--generator-url", "http://127.0.0.1:9/v1",
                                       "--generator-model", "m", "--generator-api-key-env", "ASSAY_LAKE_NO_KEY"),
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 8, out.stderr
    run_id = out.stdout.strip()
    assert f"run {run_id} has status failed" in out.stderr
    with open_lake(lake) as reader:
        assert reader.con.execute("SELECT status FROM runs").fetchall() == [("failed",)]
        assert reader.con.execute("SELECT COUNT(*) FROM answers").fetchall()[0][0] == 6
    listed = invoke("lake", "runs", lake).output
    assert "  FAILED  " in listed and "FAILED: stored for inspection" in listed
    assert json.loads(invoke("lake", "runs", lake, "--format", "json").output)[0]["status"] == "failed"
    gated = invoke("lake", "gate", lake, "--rule", "Success@3>=0.1")
    assert gated.exit_code == 8 and "has status failed" in gated.output


def test_lake_and_warehouse_together_is_a_usage_error(tmp_path):
    out = invoke("run", "--lake", tmp_path / "lake", "--warehouse", tmp_path / "w.duckdb",
                 "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl")
    assert out.exit_code == 2 and "give --lake or --warehouse, not both" in out.output
    assert not (tmp_path / "lake").exists() and not (tmp_path / "w.duckdb").exists()


def test_an_unknown_engine_and_a_missing_lake_say_what_to_do(tmp_path):
    from assay.core.errors import ConfigError

    with pytest.raises(ConfigError, match="no lake engine 'hive'; engines: duckdb, spark"):
        open_lake(tmp_path, "hive")
    with pytest.raises(ConfigError, match="no lake at .*`assay run --lake"):
        open_lake(tmp_path / "nowhere")


def test_shared_keys_name_real_columns():
    con = memory_warehouse().con
    for table, keys in SHARED_KEYS.items():
        columns = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                                             [table]).fetchall()}
        assert set(keys) <= columns, table
