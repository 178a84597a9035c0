"""A command that only reads never writes, not even to upgrade an old warehouse.

The warehouse is tests/fixtures/warehouse-012.duckdb.gz, written by the assay of schema 012 (runs, hits,
answers). Every read-only command refuses it with one line naming `assay upgrade` (exit 1) and leaves the file
and its directory byte for byte as they were; `assay sql` reads it as it is and says so; `assay upgrade`
upgrades it once, after which every command reads it."""

import gzip
import hashlib
import shutil

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.sqlfiles import latest_migration
from conftest import FIXTURES, MINI

OLD = FIXTURES / "warehouse-012.duckdb.gz"  # made by tests/fixtures/make_warehouse_012.py

READS = [
    ["report"], ["report", "latest", "latest~1"], ["compare", "latest~1", "latest"], ["show", "latest"],
    ["runs"], ["export", "latest", "--format", "csv", "--out", "{tmp}/export"],
    ["gate", "--rule", "Success@3:doc>=0.5"],
    ["regress", "--max-drop", "Success@1=0.02"], ["history", "--metric", "nDCG@10", "--pipeline", "bm25"],
    ["answers", "show", "latest"], ["judgments", "rebase", "{tmp}/j.jsonl", "--from", "17f8d420", "--to", MINI / "corpus"],
]


@pytest.fixture
def old(tmp_path):
    path = tmp_path / "w" / "old.duckdb"
    path.parent.mkdir()
    with gzip.open(OLD) as f, open(path, "wb") as out:
        shutil.copyfileobj(f, out)
    return path


def state(directory) -> dict:
    """Every file of the directory and the SHA-256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("args", READS, ids=[" ".join(map(str, a[:2])) for a in READS])
def test_a_read_only_command_never_upgrades_an_old_warehouse(old, tmp_path, args):
    shutil.copy(MINI / "judgments.jsonl", tmp_path / "j.jsonl")
    before = state(old.parent)
    result = invoke(*[str(a).format(tmp=tmp_path) for a in args], "--warehouse", old)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"error: warehouse {old} has schema version 12, this assay needs {latest_migration()}; a command that only "
        f"reads never writes to it: run `assay upgrade --warehouse {old}` once (then every command reads it; older "
        "assay versions no longer can), or read it with the assay version that wrote it"]
    assert state(old.parent) == before and not (tmp_path / "export").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "w"]  # no export, no rebase proposal


def test_judgments_check_leaves_an_old_warehouse_as_it_is(old, tmp_path):
    """Its drift note is advisory: a warehouse it cannot read without upgrading is left out, and left alone."""
    before = state(old.parent)
    result = invoke("judgments", "check", MINI / "judgments.jsonl", "--corpus", MINI / "corpus", "--warehouse", old)
    assert result.exit_code == 0, result.output
    assert state(old.parent) == before


def test_sql_reads_an_old_warehouse_as_it_is_and_says_so(old):
    before = state(old.parent)
    result = invoke("sql", "SELECT MAX(version) AS v FROM schema_migrations", "--format", "csv", "--warehouse", old)
    assert (result.exit_code, result.stdout) == (0, "v\n12\n"), result.output
    assert result.stderr.splitlines() == [
        f"note: warehouse {old} has schema version 12, this assay's is {latest_migration()}: read as it is, not "
        "upgraded (`assay upgrade` upgrades it)"]
    assert state(old.parent) == before


def test_upgrade_upgrades_once_then_every_command_reads(old, tmp_path):
    result = invoke("upgrade", "--warehouse", old)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"upgraded warehouse {old} from schema version 12 to {latest_migration()}\n"
    after = state(old.parent)
    again = invoke("upgrade", "--warehouse", old)
    assert again.stdout == f"warehouse {old} is up to date (schema version {latest_migration()})\n"
    assert state(old.parent) == after
    for args in (["runs"], ["report"], ["show", "latest"], ["export", "latest", "--format", "csv", "--out",
                                                             tmp_path / "export"]):
        result = invoke(*args, "--warehouse", old)
        assert result.exit_code == 0, (args, result.output)
    missing = invoke("upgrade", "--warehouse", tmp_path / "absent.duckdb")
    assert missing.exit_code == 1 and not (tmp_path / "absent.duckdb").exists()
    absent = tmp_path / "absent.duckdb"
    assert missing.stderr == f"error: no warehouse at {absent}; give --warehouse the file to upgrade\n"
