"""Run references (assay.store.run_refs): latest, latest~N, previous, an id, any unique part of one (the random suffix
too), and names (`assay run --name`, `assay tag`), resolved the same in a warehouse and a DuckDB lake and by every
command that names a run; a part several ids contain lists them; a part is text, so _ and % are no wildcards."""

import re
from dataclasses import replace
from datetime import datetime, timedelta

import duckdb
import pytest
from click.testing import CliRunner

from assay.store import run_refs, run_status
from assay.cli import cli
from assay.core.errors import AmbiguousRunId, RunNotFound, UsageError, WarehouseError
from assay.store.lake import open_lake
from assay.store.lake.writer import write_run
from assay.runs.runner import RunOptions, execute_run
from assay.store.warehouse import Warehouse
from conftest import MINI

# ids chosen so that parts overlap: "aa11" begins the suffix of one and ends another
IDS = ["20260101T000001-aa11bb", "20260101T000002-ccaa11", "20260101T000003-dd22ee", "20260101T000004-ff33aa"]
T0 = datetime(2026, 1, 1)


@pytest.fixture(scope="module")
def record():
    return execute_run(MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))


@pytest.fixture(scope="module")
def four_runs(tmp_path_factory, record):
    """Four runs of the mini set with the ids above, oldest first; the third failed. A warehouse and a lake."""
    root = tmp_path_factory.mktemp("refs")
    records = [replace(record, run_id=run_id, started_at=T0 + timedelta(minutes=i), finished_at=T0 + timedelta(minutes=i),
                       status="failed" if i == 2 else "complete")
               for i, run_id in enumerate(IDS)]
    with Warehouse.open(root / "w.duckdb") as wh:
        for r in records:
            wh.write_run(r)
    for r in records:
        write_run(root / "lake", r)
    return root


@pytest.fixture
def wh(four_runs):
    with Warehouse.open(four_runs / "w.duckdb", read_only=True) as wh:
        yield wh


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_latest_and_counting_back_among_complete_runs_or_every_run(wh):
    # metrics need a complete run: the failed third run is not counted
    assert [wh.resolve_run_id(r) for r in ("latest", None, "", "latest~0", "previous", "latest~1", "latest~2")] == \
        [IDS[3], IDS[3], IDS[3], IDS[3], IDS[1], IDS[1], IDS[0]]
    # a status check (gate, regress) counts every run, so `previous` is the failed one
    assert [run_status.resolve_any(wh, r)["run_id"] for r in ("latest", "previous", "latest~2", "latest~3")] == \
        [IDS[3], IDS[2], IDS[1], IDS[0]]
    with pytest.raises(RunNotFound, match=r"^latest~3 is 3 run\(s\) before the newest, but .*w\.duckdb has 3 "
                                          r"complete runs; `assay runs` lists them$"):
        wh.resolve_run_id("latest~3")
    with pytest.raises(RunNotFound, match=r"^latest~4 is 4 run\(s\) before the newest, but .* has 4 runs; "):
        run_status.resolve_any(wh, "latest~4")


def test_any_unique_part_of_an_id_names_its_run(wh):
    assert wh.resolve_run_id("ff33") == IDS[3]  # the random suffix
    assert wh.resolve_run_id("T000004") == IDS[3]  # a piece of the middle
    assert wh.resolve_run_id(IDS[0]) == IDS[0]
    # "aa11" ends the first id and is inside the second: several runs, listed
    says = f"run id part 'aa11' matches 2 runs: {IDS[0]} (bm25), {IDS[1]} (bm25); give more of the id"
    with pytest.raises(AmbiguousRunId) as exc:
        wh.resolve_run_id("aa11")
    assert str(exc.value) == says and isinstance(exc.value, RunNotFound)
    assert wh.resolve_run_id("20260101T000001") == IDS[0]  # a prefix, as before
    with pytest.raises(RunNotFound, match=r"^no run '2026_' in .*; `assay runs` lists them$"):
        wh.resolve_run_id("2026_")  # not a wildcard
    with pytest.raises(RunNotFound, match=r"^no run '%' in "):
        wh.resolve_run_id("%")


def test_a_run_that_did_not_complete_is_named_for_what_it_is(wh):
    with pytest.raises(RunNotFound, match=rf"^run {IDS[2]} has status failed: it is stored for inspection but has "
                                          r"no metrics; `assay answers show"):
        wh.resolve_run_id("dd22")
    assert run_status.resolve_any(wh, "dd22")["status"] == "failed"
    # among every run, a part shared with a failed one lists it with its status
    with pytest.raises(AmbiguousRunId, match=re.escape(f"{IDS[1]} (bm25), {IDS[2]} (bm25, failed), {IDS[3]} (bm25)")):
        run_status.resolve_any(wh, "0101T00000")


def test_a_lake_resolves_the_same_way(four_runs):
    with open_lake(four_runs / "lake") as lake:
        assert lake.resolve_run_id("previous") == IDS[1] and lake.resolve_run_id("ff33") == IDS[3]
        with pytest.raises(AmbiguousRunId, match="^run id part 'aa11' matches 2 runs"):
            lake.resolve_run_id("aa11")
        with pytest.raises(RunNotFound, match="^no run 'baseline' in "):
            lake.resolve_run_id("baseline")  # a lake keeps no names


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_command_that_names_a_run_takes_every_form(four_runs):
    w = four_runs / "w.duckdb"
    for ref, run_id in (("previous", IDS[1]), ("latest~2", IDS[0]), ("ff33", IDS[3])):
        out = invoke("report", ref, "--format", "json", "--warehouse", w)
        assert out.exit_code == 0 and f'"run_id": "{run_id}"' in out.stdout, out.output
        out = invoke("show", ref, "--format", "json", "--warehouse", w)
        assert out.exit_code == 0, out.output
    out = invoke("compare", "latest~2", "ff33", "--format", "json", "--warehouse", w)
    assert out.exit_code == 0 and IDS[0] in out.stdout and IDS[3] in out.stdout, out.output
    out = invoke("gate", "latest~3", "--rule", "AP>=0", "--warehouse", w)
    assert out.exit_code == 0 and f"\n\ngate on run {IDS[0]}\n" in out.stdout, out.output  # under the verdict
    out = invoke("gate", "previous", "--rule", "AP>=0", "--warehouse", w)  # every run counts: the failed one
    assert out.exit_code == 8 and out.stderr.startswith(f"error: run {IDS[2]} has status failed"), out.output
    out = invoke("regress", "latest", "--baseline", "latest~3", "--max-drop", "AP=0.5", "--format", "json",
                 "--warehouse", w)
    assert out.exit_code == 0 and f'"baseline": "{IDS[0]}"' in out.stdout, out.output
    out = invoke("export", "previous", "--out", four_runs / "x", "--format", "csv", "--warehouse", w)
    assert out.exit_code == 0 and out.stdout.startswith("exported 1 run(s)"), out.output
    out = invoke("answers", "show", "dd22", "--warehouse", w)
    assert out.exit_code == 0 and out.stdout.startswith(f"answers of run {IDS[2]}"), out.output
    out = invoke("lake", "report", four_runs / "lake", "previous", "--format", "json")
    assert out.exit_code == 0 and f'"run_id": "{IDS[1]}"' in out.stdout, out.output
    says = f"run id part 'aa11' matches 2 runs: {IDS[0]} (bm25), {IDS[1]} (bm25); give more of the id"
    for argv in (["report", "aa11"], ["gate", "aa11", "--rule", "AP>=0"], ["export", "aa11", "--out", four_runs / "y"],
                 ["compare", "aa11", "ff33"]):
        out = invoke(*argv, "--warehouse", w)
        assert out.exit_code == 1 and out.stderr == f"error: {says}\n", (argv, out.output)
    out = invoke("report", "nothing-like-it", "--warehouse", w)
    assert out.exit_code == 1 and out.stderr == f"error: no run 'nothing-like-it' in {w}; `assay runs` lists them\n"


def test_a_long_list_is_cut_after_ten():
    exc = AmbiguousRunId("2026", [f"r{i}" for i in range(13)])
    assert str(exc) == ("run id part '2026' matches 13 runs: r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 and 3 more; "
                        "give more of the id")


@pytest.mark.parametrize("name, why", [
    ("latest", "latest, latest~N, previous and best already mean runs"),
    ("previous", "latest, latest~N, previous and best already mean runs"),
    ("best", "latest, latest~N, previous and best already mean runs"),
    ("latest~2", "latest, latest~N, previous and best already mean runs"),
    ("20260101T000001-aa11bb", "a name starts with a letter"),
    ("2026", "a name starts with a letter"),
    ("has space", "a name starts with a letter and holds only letters, digits and . _ -"),
    ("x" * 65, "64 characters at most"),
    ("deadbeef", "hex digits alone could be part of a run id"),
])
def test_names_that_would_read_as_other_references_are_refused(name, why):
    with pytest.raises(UsageError, match=re.escape(why)):
        run_refs.check_name(name)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_tag_names_moves_and_deletes(four_runs, tmp_path):
    w = tmp_path / "w.duckdb"
    w.write_bytes((four_runs / "w.duckdb").read_bytes())
    # a run of any status may be named, so latest~N counts every run, as `assay runs` lists them
    out = invoke("tag", "latest~3", "baseline-2026-12", "--warehouse", w)
    assert (out.exit_code, out.stdout) == (0, f"named run {IDS[0]} baseline-2026-12\n"), out.output
    out = invoke("tag", "20260101T000001", "baseline-2026-12", "--warehouse", w)
    assert (out.exit_code, out.stdout) == (0, f"run {IDS[0]} is already named baseline-2026-12\n"), out.output
    out = invoke("report", "baseline-2026-12", "--format", "json", "--warehouse", w)
    assert out.exit_code == 0 and f'"run_id": "{IDS[0]}"' in out.stdout, out.output
    # a name wins over the same text inside an id, and a run may have several names
    assert invoke("tag", IDS[1], "cc", "--warehouse", w).exit_code == 2  # hex alone: refused, exit 2
    assert invoke("tag", "ff33", "main-latest", "--warehouse", w).exit_code == 0
    out = invoke("tag", "ff33", "baseline-2026-12", "--warehouse", w)
    assert out.exit_code == 1 and out.stderr == (f"error: name 'baseline-2026-12' already names run {IDS[0]}; give "
                                                 f"--force to move it to run {IDS[3]}\n"), out.output
    out = invoke("tag", "--force", "ff33", "baseline-2026-12", "--warehouse", w)
    assert out.stdout == f"moved name baseline-2026-12 from run {IDS[0]} to run {IDS[3]}\n", out.output
    out = invoke("runs", "--warehouse", w)
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["run", "name", "started"]
    assert lines[2].startswith(f"{IDS[3]}  baseline-2026-12, main-latest  2026-01-01 00:03:00")
    assert lines[5].split()[:3] == [IDS[0], "-", "2026-01-01"]
    out = invoke("runs", "--format", "csv", "--warehouse", w)
    assert out.stdout.splitlines()[1].startswith(f"{IDS[3]},baseline-2026-12 main-latest,")
    out = invoke("tag", "--delete", "main-latest", "--warehouse", w)
    assert out.stdout == f"deleted name main-latest (it named run {IDS[3]})\n", out.output
    out = invoke("tag", "--delete", "main-latest", "--warehouse", w)
    assert out.exit_code == 1 and out.stderr == (f"error: no run is named 'main-latest' in {w}; `assay runs` shows "
                                                 "the names\n")
    assert invoke("tag", "latest", "--warehouse", w).exit_code == 2  # a name is needed
    assert invoke("tag", "latest", "x-name", "--delete", "x", "--warehouse", w).exit_code == 2
    con = duckdb.connect(str(w), read_only=True)  # what a plain client sees
    try:
        assert con.execute("SELECT name, run_id FROM run_names").fetchall() == [("baseline-2026-12", IDS[3])]
    finally:
        con.close()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_run_name_names_the_new_run_and_refuses_a_taken_name_before_running(tmp_path):
    w = tmp_path / "w.duckdb"
    args = ["run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--warehouse", w]
    out = invoke(*args, "--name", "first-try")
    assert out.exit_code == 0, out.output
    run_id = out.stdout.strip()
    assert out.stderr.splitlines()[-1] == f"recorded run {run_id} (6 questions) in {w} as first-try"
    with Warehouse.open(w, read_only=True) as wh:
        assert wh.resolve_run_id("first-try") == run_id
    out = invoke(*args, "--name", "first-try")
    assert out.exit_code == 1 and out.stdout == "" and out.stderr == (
        f"error: name 'first-try' already names run {run_id}; choose another, or move it to the new run afterwards "
        "with `assay tag --force RUN first-try`\n")
    with Warehouse.open(w, read_only=True) as wh:  # refused before it ran: still one run
        assert len(wh.con.execute("SELECT run_id FROM runs").fetchall()) == 1
    out = invoke(*args, "--name", "latest")
    assert out.exit_code == 2 and "already mean runs" in out.stderr
    out = invoke("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--lake",
                 tmp_path / "lake", "--name", "x-run")
    assert out.exit_code == 2 and "--name needs a warehouse: a lake keeps no names" in out.stderr


def test_tagging_changes_nothing_when_it_fails(four_runs, tmp_path):
    w = tmp_path / "w.duckdb"
    w.write_bytes((four_runs / "w.duckdb").read_bytes())
    with Warehouse.open(w) as wh:
        run_refs.tag(wh, "latest", "keep")
        with pytest.raises(WarehouseError):
            run_refs.tag(wh, "previous", "keep")
        with pytest.raises(RunNotFound):
            run_refs.tag(wh, "no-such-run", "other")
        assert run_refs.names_by_run(wh) == {IDS[3]: ["keep"]}
