"""A prefix of a run id that matches several runs lists them, in a warehouse, a DuckDB lake and for the commands
that take any run (gate, regress); a prefix is text, so _ and % in it are no wildcards."""

import re

import pytest
from click.testing import CliRunner

from assay import run_status
from assay.cli import cli
from assay.errors import AmbiguousRunId, RunNotFound
from assay.lake import open_lake
from assay.lake.writer import write_run
from assay.runner import RunOptions, execute_run
from assay.warehouse import Warehouse


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Three complete runs of the mini set (two bm25, one with another chunk size) in a warehouse and a lake."""
    from conftest import MINI

    root = tmp_path_factory.mktemp("prefixes")
    records = [execute_run(MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=size))
               for size in (120, 240, 480)]
    with Warehouse.open(root / "w.duckdb") as wh:
        for record in records:
            wh.write_run(record)
    for record in records:
        write_run(root / "lake", record)
    return root, sorted(r.run_id for r in records)


def common_prefix(ids):
    prefix = ids[0]
    while not all(i.startswith(prefix) for i in ids):
        prefix = prefix[:-1]
    return prefix


def test_an_ambiguous_prefix_lists_the_runs_it_matches(three_runs):
    root, ids = three_runs
    prefix = common_prefix(ids)
    listed = ", ".join(f"{i} (bm25)" for i in ids)
    says = f"run prefix {prefix!r} matches 3 runs: {listed}; give more of the id"
    with Warehouse.open(root / "w.duckdb", read_only=True) as wh:
        with pytest.raises(AmbiguousRunId) as exc:
            wh.resolve_run_id(prefix)
        assert str(exc.value) == says and exc.value.matches == [f"{i} (bm25)" for i in ids]
        assert isinstance(exc.value, RunNotFound)  # the same exit code as before
        with pytest.raises(AmbiguousRunId, match=f"^{re.escape(says)}$"):
            run_status.resolve_any(wh, prefix)
        assert wh.resolve_run_id(ids[1]) == ids[1]
        assert wh.resolve_run_id(ids[1][:-2]) == ids[1]
        with pytest.raises(RunNotFound, match=r"no run '2026_' in .*; `assay runs` lists them"):
            wh.resolve_run_id("2026_")  # not a wildcard
    with open_lake(root / "lake") as lake, pytest.raises(AmbiguousRunId, match=f"^{re.escape(says)}$"):
        lake.resolve_run_id(prefix)

    for argv in (["report", prefix], ["gate", prefix, "--rule", "AP>=0"], ["export", prefix, "--out", root / "x"]):
        out = CliRunner().invoke(cli, [*map(str, argv), "--warehouse", str(root / "w.duckdb")])
        assert out.exit_code == 1 and out.stderr == f"error: {says}\n", (argv, out.output)
    lake_report = CliRunner().invoke(cli, ["lake", "report", str(root / "lake"), prefix])
    assert lake_report.exit_code == 1 and lake_report.stderr == f"error: {says}\n", lake_report.output


def test_a_long_list_is_cut_after_ten():
    exc = AmbiguousRunId("2026", [f"r{i}" for i in range(13)])
    assert str(exc) == ("run prefix '2026' matches 13 runs: r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 and 3 more; "
                        "give more of the id")
