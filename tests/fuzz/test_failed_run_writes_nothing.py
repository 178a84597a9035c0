"""Property, at the CLI: an `assay run` that fails (fuzzed judgments: broken JSON, unknown fields, quotes
that do not resolve) exits with a documented code and leaves the row count of every table in a real
DuckDB warehouse unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
import pytest

from assay.cli import cli
from conftest import MINI, scratch_dir
from .strategies import HOSTILE_JSON, JSON_VALUES, TEXT, fuzz

ROOT = scratch_dir("assay-fuzz-run-")
WAREHOUSE = ROOT / "wh.duckdb"
GOOD = [json.loads(line) for line in (MINI / "judgments.jsonl").read_text().splitlines()]
DOCUMENTED = {1, 2, 3}  # AssayError, click usage error, JudgmentsError


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])  # exceptions caught: a traceback fails below


def row_counts() -> dict[str, int]:
    con = duckdb.connect(str(WAREHOUSE), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE' ORDER BY table_name").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def setup_module():
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir()
    first = invoke("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--warehouse", WAREHOUSE)
    assert first.exit_code == 0, first.output
    assert row_counts()["runs"] == 1


def _broken(records: list[dict], index: int, key: str, value) -> list[dict]:
    out = [dict(r) for r in records]
    target = out[index % len(out)]
    if key == "quote":
        target["gold"] = [{"doc": "storage/design.md", "quote": value if isinstance(value, str) else "no such text"}]
        target["category"] = "normal"
    else:
        target[key] = value
    return out


LINES = st.one_of(
    st.builds(_broken, st.just(GOOD), st.integers(0, 5),
              st.sampled_from(["query_id", "category", "form", "gold", "hard_class", "unanswerable", "extra", "quote"]),
              st.one_of(JSON_VALUES, TEXT)).map(lambda rs: [json.dumps(r) for r in rs]),
    st.lists(st.one_of(HOSTILE_JSON, TEXT), min_size=1, max_size=3))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(15)
@given(LINES)
def test_a_failed_run_changes_no_table(lines):
    judgments = ROOT / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    before = row_counts()
    result = invoke("run", "--corpus", MINI / "corpus", "--judgments", judgments, "--warehouse", WAREHOUSE)
    if result.exit_code == 0:  # the fuzzed file happened to be valid: a run was recorded, as it should be
        assert row_counts()["runs"] == before["runs"] + 1
        return
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.exit_code in DOCUMENTED, result.output
    assert result.stderr.startswith("error: ")
    assert row_counts() == before
