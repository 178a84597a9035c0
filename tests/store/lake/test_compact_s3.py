"""`assay lake compact` and `assay lake prune` on an S3-compatible store: the lake of tests/store/lake/test_compact.py
written to a real S3-protocol server on loopback (moto's, tests/store/lake/s3_server.py). Segments are objects under
their final keys, `runs.parquet` last; every report is the same after compaction; prune removes whole runs."""

import pytest

pytest.importorskip("moto.server", reason="moto[server] (requirements-test.lock) runs the S3 server these tests use")

from assay.measures.values import score_run  # noqa: E402
from assay.store.lake.compact import compact, prune  # noqa: E402
from assay.store.lake.reader import visible_runs  # noqa: E402
from assay.store.lake.writer import write_run  # noqa: E402
from s3_server import aws, s3  # noqa: E402,F401  (fixtures)
from test_compact import DAY2, LATE, RUNS, invoke, records  # noqa: E402,F401  (records: the module fixture)

pytestmark = pytest.mark.slow  # a real S3 server on loopback, every request through it: `make test` runs them, `make check` does not


@pytest.mark.slow  # four runs written to the store, four reports read through it
def test_compact_and_prune_an_s3_lake(aws, records):
    lake = aws.lake()
    for run_id in RUNS:
        write_run(lake, records[run_id], score=score_run)
    # each request to the server costs, so this compares the reports of all runs and of the second day's (what prune
    # keeps); test_compact.py compares every command's output, run by run, on a local lake
    before = {"all": report(lake, RUNS), "day 2": report(lake, DAY2)}
    published = []

    def writer_publishes():
        if not published:
            write_run(lake, records[LATE], score=score_run)
            published.append(LATE)

    result = compact(lake, grace_s=0, before_commit=writer_publishes)
    assert [(w.day, w.runs) for w in result.written] == [("20261130", 2), ("20261201", 2)]
    keys = aws.keys(lake)
    assert not [k for k in keys if "/run_id=" in k and LATE not in k]  # every compacted run's objects are gone
    segment_keys = [k for k in keys if k.startswith("_compacted/")]
    assert len(segment_keys) == 2 * 7 and all(k.count("/") == 2 for k in segment_keys)
    assert visible_runs(lake) == sorted(RUNS + [LATE])
    assert report(lake, RUNS) == before["all"]

    pruned = invoke("lake", "prune", lake, "--keep", "2", "--grace", "0")
    assert pruned.exit_code == 0, pruned.output
    # the newest two stay; the first day's segment is rewritten empty and LATE's partitions go
    assert pruned.output.splitlines()[:4] == [f"removed {r}" for r in RUNS[:2] + [LATE]] + ["3 run(s) removed"]
    assert visible_runs(lake) == DAY2
    assert not [k for k in aws.keys(lake) if "20261130T" in k]
    assert report(lake, DAY2) == before["day 2"]


def report(lake, run_ids) -> str:
    result = invoke("lake", "report", lake, *run_ids, "--format", "json")
    assert result.exit_code == 0, result.output
    return result.output


def shared_objects(aws, lake) -> dict[str, float]:
    """{shared part key below the lake: its time on the store}: a part written again gets a new time."""
    from pyarrow import fs as pafs

    root = lake.removeprefix("s3://") + "/_shared"
    infos = aws.fs().get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    return {i.path[len(root) + 1:]: i.mtime_ns for i in infos if i.type == pafs.FileType.File}


@pytest.mark.slow  # three runs written to the store, two prunes, two reads through it
def test_shared_parts_on_s3_are_written_once_and_pruned_when_unused(aws, records):
    import dataclasses
    import time

    from test_shared_parts import AGAIN

    lake = aws.lake()
    write_run(lake, records[RUNS[0]], score=score_run)
    first = shared_objects(aws, lake)
    assert len([k for k in first if k.startswith("documents/")]) == 1
    assert not [k for k in aws.keys(lake) if k.startswith(("documents/", "chunks/", "doc_tokens/"))]
    write_run(lake, dataclasses.replace(records[RUNS[0]], run_id=AGAIN), score=score_run)
    assert shared_objects(aws, lake) == first  # the same corpus and chunks: no object written again
    write_run(lake, records[RUNS[1]], score=score_run)
    before = report(lake, [AGAIN])
    outcome = prune(lake, "2", now=time.time() + 3601)  # RUNS[0] goes; AGAIN, the newest, uses its parts
    assert outcome.pruned == [RUNS[0]] and (outcome.unused, outcome.unused_waiting) == ([], 0)
    assert prune(lake, "1", now=time.time()).unused_waiting == 3  # RUNS[1]'s chunks, within the grace period
    assert visible_runs(lake) == [AGAIN]
    outcome = prune(lake, "1", now=time.time() + 3601)
    assert len(outcome.unused) == 3 and {k.split("/")[-2] for k in outcome.unused} == {"chunk_sets", "chunks",
                                                                                     "chunk_tokens"}
    assert set(shared_objects(aws, lake)) == set(first)
    assert report(lake, [AGAIN]) == before
