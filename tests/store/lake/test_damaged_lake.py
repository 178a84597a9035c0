"""A damaged Parquet file in a lake: named in one line, its run left out of `assay lake runs`, never a traceback.

Real lakes written by ``write_run``, then damaged on disk as a crash or a full volume leaves them: a file cut in
half (no footer), a file of garbage, and a file whose footer is sound but whose first data page is overwritten (found
only by reading its rows)."""

import json
import struct

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.values import score_run
from assay.runs.runner import RunOptions, execute_run
from assay.store.lake import PARTITION_FILE, open_lake, partition_dir
from assay.store.lake.writer import write_run
from conftest import MINI

pytestmark = pytest.mark.slow  # lakes written and read again around damaged files: `make test` runs them, `make check` does not

READS = [["report"], ["compute", "-m", "nDCG@10"], ["history", "--metric", "nDCG@10", "--pipeline", "bm25"],
         ["gate", "--rule", "Success@3:doc>=0.1"], ["regress", "--max-drop", "Success@1=0.02"]]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def records():
    return [execute_run(MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=size))
            for size in (100, 120, 140)]


@pytest.fixture
def lake(tmp_path, records):
    path = tmp_path / "lake"
    for record in records:
        write_run(path, record, score=score_run)
    return path


def file_of(lake, table, run_id):
    return partition_dir(lake, table, run_id) / PARTITION_FILE


def error_line(lake, result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    return line


def test_a_cut_file_and_a_garbage_file_are_named_and_lake_runs_lists_the_rest(lake, records):
    cut, garbage, sound = (r.run_id for r in records)
    hits = file_of(lake, "hits", cut)
    hits.write_bytes(hits.read_bytes()[: hits.stat().st_size // 2])
    file_of(lake, "runs", garbage).write_bytes(b"not parquet at all\n" * 10)

    listed = invoke("lake", "runs", lake, "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [sound]
    bad = {cut: hits, garbage: file_of(lake, "runs", garbage)}
    assert listed.stderr.splitlines() == [  # by run id
        f"warning: run {run_id} left out: {bad[run_id]} is not a readable Parquet file (No magic bytes found at end "
        f"of file); move its partitions aside ({lake}/*/run_id={run_id}) or write the run again"
        for run_id in sorted(bad)]
    first = min(bad)
    for args in READS:
        line = error_line(lake, invoke("lake", args[0], lake, *args[1:]))
        assert line == (
            f"error: lake {lake}: run {first} (and 1 more run) cannot be read: {bad[first]} is not a readable Parquet "
            f"file (No magic bytes found at end of file); move its partitions aside ({lake}/*/run_id={first}) or "
            f"write the run again; `assay lake runs {lake}` lists the runs that can be read"), args
    with open_lake(lake, skip_damaged=True) as reader:  # the library: the readable runs, the others named
        assert reader.run_ids == [sound] and sorted(reader.damaged) == sorted([cut, garbage])
        assert reader.con.execute("SELECT DISTINCT run_id FROM hits").fetchall() == [(sound,)]


def test_a_damaged_page_behind_a_sound_footer_is_named_when_read(lake, records):
    run_id = records[1].run_id
    hits = file_of(lake, "hits", run_id)
    data = bytearray(hits.read_bytes())
    footer = struct.unpack("<I", data[-8:-4])[0]  # PAR1, pages, footer, its length, PAR1
    data[4:len(data) - 8 - footer] = b"\xab" * (len(data) - 12 - footer)
    hits.write_bytes(bytes(data))
    listed = invoke("lake", "runs", lake)  # the footers read: every run listed
    assert listed.exit_code == 0 and run_id in listed.stdout and listed.stderr == ""
    line = error_line(lake, invoke("lake", "report", lake, run_id))
    assert line.startswith(f"error: lake {lake}: run {run_id} cannot be read: {hits} is not a readable Parquet file (")
    assert line.endswith(f"; `assay lake runs {lake}` lists the runs that can be read")
