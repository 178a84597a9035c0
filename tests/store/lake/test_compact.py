"""`assay lake compact` and `assay lake prune` on real lakes: demo runs over two days written by ``write_run``, read by
DuckDB (every report byte for byte before and after), by Spark (the same runs and values), on a local directory and
on an S3-protocol server on loopback (tests/store/lake/s3_server.py). The grace period is checked with a given
clock (``now``), never by waiting."""

import dataclasses
import json
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.values import score_run
from assay.runs.runner import RunOptions, execute_run
from assay.store.lake import PARTITION_FILE, open_lake, partition_dir
from assay.store.lake.compact import collect_superseded, compact, prune
from assay.store.lake.reader import visible_runs
from assay.store.lake.segments import SEGMENTS, segments
from assay.store.lake.shared import SHARED
from assay.store.lake.writer import write_run
from conftest import MINI

pytestmark = pytest.mark.slow  # lakes of several runs written, compacted and read again: `make test` runs them, `make check` does not

DAY1 = ["20261130T100000-aaaaaa", "20261130T110000-bbbbbb"]
DAY2 = ["20261201T090000-cccccc", "20261201T100000-dddddd"]
RUNS = DAY1 + DAY2
LATE = "20261130T230000-eeeeee"  # a run of the first day published while compaction works


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def records():
    """Four mini runs (different chunk sizes, so their values differ) and a fifth, with run ids over two days."""
    made = [execute_run(MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=size))
            for size in (100, 120, 140, 160, 180)]
    return {run_id: dataclasses.replace(record, run_id=run_id) for run_id, record in zip(RUNS + [LATE], made)}


@pytest.fixture(scope="module")
def written(records, tmp_path_factory):
    lake = tmp_path_factory.mktemp("written") / "lake"
    for run_id in RUNS:
        write_run(lake, records[run_id], score=score_run)
    return lake


@pytest.fixture
def lake(written, tmp_path):
    """A fresh copy of the four-run lake."""
    return Path(shutil.copytree(written, tmp_path / "lake"))


def outputs(lake, run_ids, each: bool = True) -> dict[str, str]:
    """What `assay lake` runs, report (all together, and each run unless not ``each``), history and compute
    print."""
    commands = {"runs": ["runs", lake, "--format", "json"],
                "report": ["report", lake, *run_ids, "--format", "json"],
                "history": ["history", lake, "--metric", "nDCG@10", "--pipeline", "bm25", "--format", "json"],
                "compute": ["compute", lake, "-m", "nDCG@10", "-m", "Success@3", "-m", "R@10", "-m", "AP",
                            "--format", "json"]}
    commands.update({f"report {r}": ["report", lake, r, "--format", "json"] for r in run_ids if each})
    out = {}
    for name, args in commands.items():
        result = invoke("lake", *args)
        assert result.exit_code == 0, (name, result.output)
        out[name] = result.output.replace(str(lake), "LAKE")
    return out


def report(lake, run_ids) -> str:
    """`assay lake report` of ``run_ids`` together, as JSON."""
    result = invoke("lake", "report", lake, *run_ids, "--format", "json")
    assert result.exit_code == 0, result.output
    return result.output.replace(str(lake), "LAKE")


def files_per_table_per_day(lake) -> dict[tuple[str, str], int]:
    """{(table, day): the Parquet files holding that table's rows of that day's runs}: per-run partitions and
    segment files."""
    counts: dict[tuple[str, str], int] = {}
    for file in Path(lake).rglob("*.parquet"):
        rel = file.relative_to(lake).parts
        if rel[0] == SHARED:  # shared parts: one per content key, of no day
            continue
        if rel[0] == SEGMENTS:
            key = (file.stem, rel[1][:8])
        else:
            key = (rel[0], rel[1].removeprefix("run_id=")[:8])
        counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.slow  # ~30 reads of the lake
def test_every_report_is_the_same_after_compaction_and_each_day_has_one_file_per_table(lake):
    before = outputs(lake, RUNS)
    files_before = files_per_table_per_day(lake)
    assert max(files_before.values()) == 2 and len(files_before) == 2 * 7  # the runs' own tables

    result = invoke("lake", "compact", lake)  # the default grace: the partitions stay an hour for open readers
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("20261130: 2 run(s) compacted, 2 in segment _compacted/20261130-")
    assert lines[0].endswith("(14 files -> 7)") and lines[1].startswith("20261201: 2 run(s) compacted")
    assert lines[2] == "removed 0 superseded segment(s) or partition(s); 4 wait for the grace period"
    assert outputs(lake, RUNS) == before
    assert all(partition_dir(lake, "hits", r).is_dir() for r in RUNS)
    assert max(files_per_table_per_day(lake).values()) == 3  # the partitions, kept for open readers, and a segment

    removed, waiting = collect_superseded(lake, 3600, now=time.time() + 3601)
    assert waiting == 0 and len(removed) == 4 * 7
    after = files_per_table_per_day(lake)
    assert set(after) == set(files_before) and set(after.values()) == {1}  # the target: at most 3
    assert not list(lake.glob("*/run_id=*"))
    assert outputs(lake, RUNS) == before
    assert invoke("lake", "compact", lake).output.startswith("nothing to compact")


@pytest.mark.slow  # ~11 reads of the lake (the test above compares every command run by run)
def test_a_run_published_during_compaction_stays_visible_and_a_later_compaction_supersedes(lake, records):
    before = report(lake, RUNS)
    published = []

    def writer_publishes():  # between compaction's listing and its commit
        if not published:
            write_run(lake, records[LATE], score=score_run)
            published.append(LATE)

    first = compact(lake, grace_s=0, before_commit=writer_publishes)
    assert [w.runs for w in first.written] == [2, 2] and published == [LATE]
    assert visible_runs(lake) == sorted(RUNS + [LATE])
    assert (partition_dir(lake, "runs", LATE) / PARTITION_FILE).is_file()  # not compacted, not removed
    assert report(lake, RUNS) == before

    (old,) = [s for s in segments(lake) if s.day == "20261130"]
    second = compact(lake, grace_s=600)
    assert [(w.day, w.runs, w.added) for w in second.written] == [("20261130", 3, 1)]
    assert [s.name for s in segments(lake) if s.day == "20261130"] == [old.name, second.written[0].name]
    assert report(lake, RUNS) == before
    everything = outputs(lake, RUNS + [LATE], each=False)

    committed = max(s.committed_at for s in segments(lake))
    assert collect_superseded(lake, 600, now=committed + 599) == ([], 2)  # the old segment, LATE's partitions
    removed, waiting = collect_superseded(lake, 600, now=committed + 601)
    assert waiting == 0 and str(lake / SEGMENTS / old.name) in removed
    assert [s.name for s in segments(lake) if s.day == "20261130"] == [second.written[0].name]
    assert not partition_dir(lake, "runs", LATE).exists()
    assert outputs(lake, RUNS + [LATE], each=False) == everything
    assert max(files_per_table_per_day(lake).values()) == 1


def test_a_killed_compaction_leaves_nothing_visible_and_is_removed_after_the_grace_period(lake):
    before = outputs(lake, RUNS, each=False)

    def killed():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compact(lake, grace_s=0, before_commit=killed)
    assert not [p for p in (lake / SEGMENTS).iterdir()]  # the staging went with it
    assert outputs(lake, RUNS, each=False) == before
    # an object-store compaction killed before its commit leaves a segment without runs: never read
    stray = lake / SEGMENTS / "20261130-20261202T000000000000-abcdef"
    stray.mkdir()
    shutil.copy(partition_dir(lake, "hits", RUNS[0]) / PARTITION_FILE, stray / "hits.parquet")
    assert outputs(lake, RUNS, each=False) == before
    assert collect_superseded(lake, 600, now=time.time() - 60) == ([], 1)
    assert collect_superseded(lake, 600, now=time.time() + 601)[0] == [str(stray)]


def test_prune_by_count_keeps_baselines_and_the_newest_run_and_says_what_it_removed(lake):
    before = outputs(lake, RUNS)
    compact(lake, grace_s=0)
    (lake / "assay.toml").write_text(f'[lake]\nbaselines = ["{RUNS[0][:17]}"]\n')  # a unique part of its id
    dry = invoke("lake", "prune", lake, "--keep", "1", "--dry-run", "--config", lake / "assay.toml")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines() == [
        f"kept {RUNS[0]}: a baseline ({lake / 'assay.toml'} [lake] baselines)",
        f"would remove {RUNS[1]}", f"would remove {RUNS[2]}", "2 run(s) would be removed"]
    assert visible_runs(lake) == RUNS

    result = invoke("lake", "prune", lake, "--keep", "1", "--grace", "0", "--config", lake / "assay.toml")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:4] == [f"kept {RUNS[0]}: a baseline ({lake / 'assay.toml'} [lake] baselines)",
                         f"removed {RUNS[1]}", f"removed {RUNS[2]}", "2 run(s) removed"]
    assert lines[4].startswith("20261130: segment rewritten without 1 run(s), 1 left: _compacted/20261130-")
    assert visible_runs(lake) == [RUNS[0], RUNS[3]]
    kept = outputs(lake, [RUNS[0], RUNS[3]])
    for run_id in (RUNS[0], RUNS[3]):
        assert kept[f"report {run_id}"] == before[f"report {run_id}"]
    assert len(segments(lake)) == 2  # one per day: the rewritten ones superseded the old at once (grace 0)


def test_prune_by_age_never_removes_the_newest_complete_run_of_a_pipeline(lake):
    now = datetime(2026, 12, 12, tzinfo=timezone.utc).timestamp()  # every run is more than 10 days old
    outcome = prune(lake, "10d", now=now, grace_s=0)
    assert outcome.pruned == RUNS[:3]
    assert list(outcome.protected) == [RUNS[3]] and "newest complete bm25 run" in outcome.protected[RUNS[3]]
    assert visible_runs(lake) == [RUNS[3]]
    assert not [p for p in lake.glob(f"*/run_id={RUNS[0]}")]
    assert prune(lake, "10d", baselines=[(RUNS[3], "--baseline")], now=now).pruned == []
    bad = invoke("lake", "prune", lake, "--keep", "30x")
    assert bad.exit_code == 2 and "--keep '30x': give a number of runs to keep (500) or an age (30d, 12h)" in \
        bad.output
    missing = invoke("lake", "prune", lake, "--keep", "1", "--baseline", "nosuchrun")
    assert missing.exit_code != 0 and missing.output.startswith("error: ") and "nosuchrun" in missing.output
    assert visible_runs(lake) == [RUNS[3]]


def test_a_damaged_segment_file_is_named_in_one_line(lake):
    compact(lake, grace_s=0)
    (segment,) = [s for s in segments(lake) if s.day == "20261130"]
    file = lake / SEGMENTS / segment.name / "hits.parquet"
    file.write_bytes(b"PAR1 not parquet at all")
    report = invoke("lake", "report", lake, RUNS[3])
    assert report.exit_code == 1 and len(report.output.splitlines()) == 1
    assert report.output.startswith(f"error: lake {lake}: run {RUNS[0]} (and 1 more run) cannot be read: {file} is "
                                    "not a readable Parquet file (")
    assert f"move the segment aside ({lake}/_compacted/{segment.name}: its runs go with it)" in report.output
    runs = invoke("lake", "runs", lake, "--format", "json")
    assert runs.exit_code == 0 and runs.output.startswith(f"warning: run {RUNS[0]} left out: {file}")
    assert [r["run_id"] for r in json.loads(runs.output[runs.output.index("["):])] == DAY2[::-1]

    commit = lake / SEGMENTS / segment.name / "runs.parquet"  # the file that lists the segment's runs
    commit.write_bytes(b"not parquet")
    for args in (["runs", lake], ["report", lake, RUNS[3]]):
        result = invoke("lake", *args)
        assert result.exit_code == 1 and result.output.splitlines() == [
            f"error: lake {lake}: {commit} is not a readable Parquet file (Parquet magic bytes not found in footer. "
            "Either the file is corrupted or this is not a parquet file.); the runs of segment "
            f"{segment.name} cannot be listed: restore the file, or move _compacted/{segment.name} aside (its runs "
            "go with it)"]


@pytest.mark.slow  # Spark: a few queries of seconds each
def test_spark_reads_a_compacted_lake_as_duckdb_reads_the_partitions(lake, records, spark_root):
    from assay.measures.registry import parse_measure
    from assay.measures.run_means import run_means
    from conftest import SPARK_MASTER

    measures = [parse_measure("nDCG@10"), parse_measure("R@10")]
    with open_lake(lake) as duck:
        expected = run_means(duck, measures)
        ranked = by_question(duck.query(measures[0].sql, **measures[0].params(RUNS[2], "final")))
    compact(lake, grace_s=0)
    assert not list(lake.glob("*/run_id=*"))  # every row is read from the segments now
    write_run(lake, records[LATE], score=score_run)  # and one run from its partitions, beside them
    with open_lake(lake) as duck:
        expected_late = [r for r in run_means(duck, measures) if r["run_id"] == LATE]
    with open_lake(lake, engine="spark", spark_master=SPARK_MASTER) as spark:
        assert spark.run_ids == sorted(RUNS + [LATE])
        got = run_means(spark, measures)
        recomputed = by_question(spark.query(measures[0].sql, **measures[0].params(RUNS[2], "final")))  # from hits
    late = [r for r in got if r["run_id"] == LATE]
    got = [r for r in got if r["run_id"] != LATE]
    for mine, theirs in ((got, expected), (late, expected_late)):
        assert [{k: v for k, v in r.items() if k != "value"} for r in mine] == \
            [{k: v for k, v in r.items() if k != "value"} for r in theirs]
        assert all(g["value"] == pytest.approx(e["value"], abs=1e-12) for g, e in zip(mine, theirs))
    assert len(late) == 4 and len(ranked) > 0 and recomputed == pytest.approx(ranked, abs=1e-12)


def by_question(result) -> dict[tuple, float]:
    columns, rows = result
    at = columns.index("value")
    return {tuple(v for i, v in enumerate(row) if i != at): float(row[at]) for row in rows}


def test_an_unknown_baseline_names_the_command_that_lists_the_lakes_runs(lake):
    result = invoke("lake", "prune", lake, "--keep", "1", "--baseline", "no-such-run")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        f"error: no run 'no-such-run' in {lake}; `assay lake runs {lake}` lists them")
