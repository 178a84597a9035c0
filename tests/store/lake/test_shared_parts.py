"""One copy of each corpus: shared rows stored once per content key under ``LAKE/_shared/<table>/`` (assay.store.lake.shared),
read beside the per-run copies of lakes written before that layout. Real lakes written by ``write_run``, read by
`assay lake` (DuckDB); the grace period is checked with a given clock (``now``), never by waiting."""

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.measures.values import score_run
from assay.store.lake import PARTITION_FILE, partition_dir
from assay.store.lake.compact import prune
from assay.store.lake.reader import visible_runs
from assay.store.lake.shared import PART_KEYS, SHARED, run_parts
from assay.store.lake.writer import STAGING, write_run
from test_compact import RUNS, invoke, outputs, records  # noqa: F401  (records: the module fixture)

pytestmark = pytest.mark.slow  # lakes of several runs written, pruned and read again: `make test` runs them, `make check` does not

AGAIN = "20261130T120000-ffffff"  # RUNS[0]'s pipeline and chunk size again, as another run


def shared_files(lake) -> dict[str, tuple[int, int]]:
    """{shared part: (inode, mtime in ns)}: a part written again would change either."""
    root = Path(lake) / SHARED
    return {str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def old_layout(lake: Path) -> None:
    """Rewrite ``lake`` as the writer before ``_shared`` wrote it: each run's partitions hold its own copy of the
    shared rows it uses (``doc_tokens``: only the documents its hits touch), and there is no ``_shared``."""
    for run_id in visible_runs(lake):
        row = pq.read_table(partition_dir(lake, "runs", run_id) / PARTITION_FILE).to_pylist()[0]
        hit_docs = duckdb.execute("SELECT DISTINCT doc_id FROM read_parquet(?)",
                                  [str(partition_dir(lake, "hits", run_id) / PARTITION_FILE)]).fetchall()
        for table in PART_KEYS:
            part = lake / SHARED / table / run_parts(table, row)
            if not part.is_file():
                continue
            data = pq.read_table(part)
            data = data.set_column(0, "run_id", [[run_id] * data.num_rows])
            if table == "doc_tokens":
                touched = {r[0] for r in hit_docs}
                data = data.filter(pa.array([d in touched for d in data.column("doc_id").to_pylist()]))
            target = partition_dir(lake, table, run_id)
            target.mkdir(parents=True)
            pq.write_table(data, target / PARTITION_FILE)
    for part in sorted((lake / SHARED).rglob("*"), reverse=True):
        part.unlink() if part.is_file() else part.rmdir()
    (lake / SHARED).rmdir()


def test_a_second_run_on_a_corpus_writes_no_new_shared_part(records, tmp_path):
    lake = tmp_path / "lake"
    write_run(lake, records[RUNS[0]], score=score_run)
    first = shared_files(lake)
    assert {name.split("/")[0] for name in first} == set(PART_KEYS) - {"document_pages"}  # the mini set has no pages
    assert not list(lake.glob("documents")) and not list(lake.glob("chunks"))  # no per-run copy
    write_run(lake, dataclasses.replace(records[RUNS[0]], run_id=AGAIN), score=score_run)
    assert shared_files(lake) == first  # nothing written again, nothing replaced
    write_run(lake, records[RUNS[1]], score=score_run)  # another chunk size: its chunks only
    added = {name.split("/")[0] for name in set(shared_files(lake)) - set(first)}
    assert added == {"chunk_sets", "chunks", "chunk_tokens"}
    assert all(shared_files(lake)[name] == first[name] for name in first)
    per_run = sum(f.stat().st_size for f in lake.glob(f"*/run_id={AGAIN}/*"))
    shared = sum(f.stat().st_size for f in (lake / SHARED).rglob("*.parquet"))
    assert per_run < shared  # a run's own rows, well under the corpus it ran on


@pytest.mark.slow  # ~20 reads of three lakes
def test_reports_are_the_same_from_the_old_layout_the_new_and_a_mix(records, tmp_path):
    new = tmp_path / "new"
    for run_id in RUNS:
        write_run(new, records[run_id], score=score_run)
    old = tmp_path / "old"
    subprocess.run(["cp", "-a", str(new), str(old)], check=True)
    old_layout(old)
    assert not (old / SHARED).exists() and (partition_dir(old, "documents", RUNS[0]) / PARTITION_FILE).is_file()
    expected = outputs(new, RUNS)
    assert outputs(old, RUNS) == expected  # a lake written before the change still reads, the same
    # runs of the new layout written into an old lake: their parts and the old runs' copies, read once
    mixed = tmp_path / "mixed"
    subprocess.run(["cp", "-a", str(old), str(mixed)], check=True)
    for run_id in RUNS[:2]:
        for table in [t for t in os.listdir(mixed) if not t.startswith(("_", "."))]:
            subprocess.run(["rm", "-rf", str(partition_dir(mixed, table, run_id))], check=True)
        write_run(mixed, records[run_id], score=score_run)
    assert (mixed / SHARED / "documents").is_dir() and (partition_dir(mixed, "documents", RUNS[3])).is_dir()
    assert outputs(mixed, RUNS) == expected


def dead_owner_staging(lake: Path, run_id: str) -> Path:
    """The staging directory name a writer that no longer runs would have left (its process has exited)."""
    prefix = subprocess.run([sys.executable, "-c", f"from assay.core import scratch; print(scratch.name({STAGING!r}))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    return lake / f"{prefix}{run_id}"


def test_a_killed_writers_half_written_part_is_never_read_and_is_removed(records, tmp_path):
    lake = tmp_path / "lake"
    write_run(lake, records[RUNS[0]], score=score_run)
    before = outputs(lake, RUNS[:1], each=False)
    # killed while it wrote a part of a new chunk set: the half file is in its staging, never under _shared
    staging = dead_owner_staging(lake, RUNS[1])
    row = pq.read_table(partition_dir(lake, "runs", RUNS[0]) / PARTITION_FILE).to_pylist()[0]
    half = staging / SHARED / "chunks" / run_parts("chunks", {**row, "chunk_set": "c" * 64})
    half.parent.mkdir(parents=True)
    half.write_bytes(b"PAR1 half a file")
    assert outputs(lake, RUNS[:1], each=False) == before
    write_run(lake, records[RUNS[1]], score=score_run)  # the next writer removes it, and writes its own parts
    assert not staging.exists()
    assert not [p for p in lake.iterdir() if p.name.startswith(STAGING)]
    assert visible_runs(lake) == RUNS[:2]
    assert outputs(lake, RUNS[:2], each=False)["report"].count("run_id") >= 2


def test_prune_removes_a_part_no_run_uses_only_after_the_grace_period_and_with_no_writer_in_flight(records,
                                                                                                 tmp_path):
    lake = tmp_path / "lake"
    for run_id in RUNS[:2]:  # two chunk sizes: the first run's chunk parts are its own
        write_run(lake, records[run_id], score=score_run)
    kept = outputs(lake, RUNS[1:2])[f"report {RUNS[1]}"]
    parts = set(shared_files(lake))
    outcome = prune(lake, "1", now=time.time())
    assert outcome.pruned == RUNS[:1] and outcome.unused == [] and outcome.unused_waiting == 3
    assert set(shared_files(lake)) == parts  # within the grace period: a run being written may use them
    flying = lake / f"{STAGING}x-1-1-{RUNS[2]}"  # a writer in flight (its staging directory)
    flying.mkdir()
    assert prune(lake, "1", now=time.time() + 3601).unused_waiting == 3
    flying.rmdir()
    dead_owner_staging(lake, RUNS[2]).mkdir()  # a killed writer's staging: no writer in flight
    result = invoke("lake", "prune", lake, "--keep", "1", "--grace", "0")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "removed 3 shared part(s) no run uses"
    gone = parts - set(shared_files(lake))
    assert {name.split("/")[0] for name in gone} == {"chunk_sets", "chunks", "chunk_tokens"}
    assert outputs(lake, RUNS[1:2])[f"report {RUNS[1]}"] == kept
    # a part a prune removed is written again by the next run that needs it
    write_run(lake, records[RUNS[0]], score=score_run)
    assert set(shared_files(lake)) == parts


def test_a_damaged_shared_part_is_named_in_one_line(records, tmp_path):
    lake = tmp_path / "lake"
    for run_id in RUNS[:2]:
        write_run(lake, records[run_id], score=score_run)
    (part,) = (lake / SHARED / "documents").iterdir()
    part.write_bytes(b"PAR1 not parquet at all")
    result = invoke("lake", "report", lake, RUNS[1])
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert result.output.startswith(f"error: lake {lake}: run {RUNS[0]} (and 1 more run) cannot be read: {part} is "
                                    "not a readable Parquet file (")
    assert "delete it and write a run on the same corpus" in result.output
    part.unlink()  # as the message says: the next run on the corpus writes it again
    write_run(lake, dataclasses.replace(records[RUNS[0]], run_id=AGAIN), score=score_run)
    assert invoke("lake", "report", lake, RUNS[1]).exit_code == 0


@pytest.mark.slow  # Spark: a few queries of seconds each
def test_spark_reads_shared_parts_and_old_copies_to_the_values_duckdb_reads(records, tmp_path, spark_root):
    from assay.measures.registry import parse_measure
    from assay.measures.run_means import run_means
    from assay.store.lake import open_lake
    from conftest import SPARK_MASTER

    lake = tmp_path / "lake"
    write_run(lake, records[RUNS[0]], score=score_run)
    old_layout(lake)  # one run as written before _shared
    for run_id in RUNS[1:3]:  # and two in the new layout, one on the old run's chunk set
        write_run(lake, records[run_id], score=score_run)
    write_run(lake, dataclasses.replace(records[RUNS[0]], run_id=AGAIN), score=score_run)
    measures = [parse_measure("nDCG@10"), parse_measure("SpanRecall@1000tok")]  # gold spans, chunk and doc tokens
    with open_lake(lake) as duck:
        expected = run_means(duck, measures)
    with open_lake(lake, engine="spark", spark_master=SPARK_MASTER) as spark:
        assert spark.run_ids == sorted(RUNS[:3] + [AGAIN])
        assert spark.con.execute("SELECT COUNT(*) FROM chunk_sets").fetchall() == [(3,)]  # each read once
        got = run_means(spark, measures)
    assert len(got) == len(expected) >= 8 and [{k: v for k, v in r.items() if k != "value"} for r in got] == \
        [{k: v for k, v in r.items() if k != "value"} for r in expected]
    assert all(g["value"] == pytest.approx(e["value"], abs=1e-12) for g, e in zip(got, expected))


def test_every_shared_table_but_the_interval_memo_has_a_content_key_the_runs_row_names():
    from assay.store.lake import SHARED_KEYS
    from assay.store.lake.shared import REF_COLUMNS

    assert set(PART_KEYS) | {"interval_memo"} == set(SHARED_KEYS)
    assert all(set(keys) <= set(REF_COLUMNS) and set(keys) <= set(SHARED_KEYS[t]) for t, keys in PART_KEYS.items())
