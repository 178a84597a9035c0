"""The manual's Ibis examples run as a user runs them: every ```python block of README.md and docs/*.md that uses
Ibis (`import ibis`, `assay.analytics`) is run as written, in a fresh Python process, in a directory holding what
the examples name: `warehouse/assay.duckdb` written by `assay demo`, and `lake/` of two `assay run --lake` runs.

Plain Ibis on a warehouse (ibis.duckdb.connect(path, read_only=True), list_tables, table, sql) is also held here
directly: Ibis 12 calls DuckDB's fetch_arrow_table, which DuckDB 2 removed, so this fails on a DuckDB assay must
not be installed with (pyproject.toml caps it below 2)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import DEMO, ROOT

FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
USES_IBIS = re.compile(r"^\s*(import ibis\b|from ibis\b|import assay\.analytics\b|from assay\.analytics\b)", re.M)


def ibis_blocks() -> list[tuple[str, str]]:
    """(where, code) of every Python block of the README and the manual that uses Ibis."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if USES_IBIS.search(match.group(1)):
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(ROOT).as_posix()}:{line}", match.group(1)))
    return found


BLOCKS = ibis_blocks()


def assay(*args, cwd):
    done = subprocess.run([sys.executable, "-m", "assay", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """What a user has after `assay demo` and two runs into a lake: the directory every example runs in."""
    work = tmp_path_factory.mktemp("ibis-docs")
    assay("demo", cwd=work)
    for size in (800, 400):
        assay("run", "--lake", "lake", "--corpus", DEMO / "corpus", "--judgments", DEMO / "judgments.jsonl",
              "--chunk-size", size, cwd=work)
    return work


def python(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_manual_has_the_ibis_examples_a_user_needs():
    """The plain-Ibis examples the manual promises are found, so the test below cannot pass by finding none."""
    code = "\n".join(block for _, block in BLOCKS)
    assert 'ibis.duckdb.connect("warehouse/assay.duckdb", read_only=True)' in code
    assert "read_parquet(" in code and "hive_partitioning=True" in code
    assert "analytics.connect(" in code
    assert {where.split(":")[0] for where, _ in BLOCKS} >= {"docs/warehouse-and-lake.md"}


@pytest.mark.slow  # assay demo, two lake runs and a Python process per example importing Ibis
@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[where for where, _ in BLOCKS])
def test_an_ibis_example_of_the_manual_runs_as_written(workdir, code):
    done = python(code, workdir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the example printed nothing"
    assert "Warning" not in done.stderr, done.stderr


@pytest.mark.slow  # a Python process importing Ibis
def test_plain_ibis_lists_reads_and_queries_a_warehouse_read_only(workdir):
    done = python("""
import ibis, json
con = ibis.duckdb.connect("warehouse/assay.duckdb", read_only=True)
tables = con.list_tables()
runs = con.table("runs").select("run_id", "status", "pipeline").execute()
means = con.sql("SELECT measure, level, n FROM measure_means WHERE measure = 'Success@3' ORDER BY level").execute()
again = con.list_tables()  # the connection still works after every call
con.disconnect()
print(json.dumps({"tables": tables, "again": again == tables, "runs": runs.to_dict("records"),
                  "means": means.to_dict("records")}))
""", workdir)
    assert done.returncode == 0, done.stderr
    import json

    seen = json.loads(done.stdout)
    assert {"runs", "hits", "measure_values", "measure_means", "judged_ranking", "run_overview"} <= set(seen["tables"])
    assert seen["again"] is True
    assert [(r["status"], r["pipeline"]) for r in seen["runs"]] == [("complete", "bm25")]
    assert seen["means"] == [{"measure": "Success@3", "level": "chunk", "n": 56},
                             {"measure": "Success@3", "level": "doc", "n": 56}]


@pytest.mark.slow  # a Python process importing Ibis
def test_assay_reads_beside_an_open_read_only_ibis_connection(workdir):
    """While a user's read-only Ibis connection is open, assay reads the warehouse too (readers share the file)."""
    reader = subprocess.Popen([sys.executable, "-c", """
import ibis, sys
con = ibis.duckdb.connect("warehouse/assay.duckdb", read_only=True)
con.list_tables()
print("open", flush=True)
sys.stdin.readline()
"""], cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline() == "open\n"
        assert "complete" in assay("runs", cwd=workdir).stdout
    finally:
        reader.communicate("\n", timeout=60)
