"""Migrations, read-only access, and run lookup on real DuckDB files."""

import duckdb
import pytest

from assay.core.errors import RunNotFound, WarehouseError
from assay.runs.runner import RunOptions, run
from assay.core.sqlfiles import load_sql, migrations
from assay.store.warehouse import Warehouse, resolve_path


def test_fresh_warehouse_is_at_latest_version(tmp_path):
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        assert wh.schema_version() == migrations()[-1][0]
        names = [r[0] for r in wh.con.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()]
        assert names == [name for _, name, _ in migrations()]


def test_an_old_warehouse_is_upgraded_by_a_writer_never_by_a_read(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL)")
    con.execute(load_sql("migrations/001_init"))
    con.execute("INSERT INTO schema_migrations VALUES (1, 'init', now())")
    con.execute("INSERT INTO corpora VALUES ('h', 'root', 0, 0, now())")
    con.close()
    before = path.read_bytes()
    with pytest.raises(WarehouseError, match=r"has schema version 1, .* run `assay upgrade --warehouse "):
        Warehouse.open(path, read_only=True)  # a read never writes, not even to upgrade
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.duckdb"]
    with Warehouse.open(path, read_only=True, old_schema="read") as wh:  # `assay sql`: the file as it is
        assert wh.schema_version() == 1 and wh.con.execute("SELECT root FROM corpora").fetchall() == [("root",)]
    assert path.read_bytes() == before
    with Warehouse.brief(path).reading() as wh:  # a run's reads: it writes next anyway, so it upgrades
        assert wh.read_only and wh.schema_version() == migrations()[-1][0]
    with Warehouse.open(path) as wh:
        assert wh.schema_version() == migrations()[-1][0]
        assert wh.con.execute("SELECT root FROM corpora").fetchall() == [("root",)]
        assert wh.con.execute("SELECT COUNT(*) FROM judged_ranking").fetchall() == [(0,)]


def test_newer_warehouse_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    Warehouse.open(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_migrations VALUES (999, 'future', now())")
    con.close()
    with pytest.raises(WarehouseError, match="newer than this assay knows"):
        Warehouse.open(path)


def test_missing_warehouse_for_reading(tmp_path):
    with pytest.raises(WarehouseError, match="no warehouse at"):
        Warehouse.open(tmp_path / "absent.duckdb", read_only=True)


def test_path_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("ASSAY_WAREHOUSE", raising=False)
    assert str(resolve_path(None)) == "warehouse/assay.duckdb"
    monkeypatch.setenv("ASSAY_WAREHOUSE", str(tmp_path / "env.duckdb"))
    assert resolve_path(None) == tmp_path / "env.duckdb"
    assert str(resolve_path("given.duckdb")) == "given.duckdb"


def test_run_lookup(warehouse, mini_corpus, mini_judgments):
    with pytest.raises(RunNotFound, match="no runs yet"):
        warehouse.resolve_run_id("latest")
    a = run(warehouse, mini_corpus, mini_judgments, RunOptions())
    b = run(warehouse, mini_corpus, mini_judgments, RunOptions(chunk_size=100))
    assert warehouse.resolve_run_id("latest") == max([a, b], key=lambda r: (r.started_at, r.run_id)).run_id
    assert warehouse.resolve_run_id(a.run_id) == a.run_id
    assert warehouse.resolve_run_id(a.run_id[:-1]) == a.run_id  # a unique prefix is enough
    with pytest.raises(RunNotFound, match="no run 'zzz'"):
        warehouse.resolve_run_id("zzz")


def test_sql_includes_are_text_and_refuse_cycles(tmp_path, monkeypatch):
    from assay.core import sqlfiles
    from assay.core.errors import AssayError

    text = load_sql("measures/span_recall")
    assert "-- @include" not in text and "WITH context AS" in text and text.rstrip().endswith("q.answerable")
    (tmp_path / "a.sql").write_text("-- @include b\nSELECT 1\n")
    (tmp_path / "b.sql").write_text("-- @include a\n")
    monkeypatch.setattr(sqlfiles, "sql_root", lambda: tmp_path)
    sqlfiles._index.cache_clear()
    try:
        with pytest.raises(AssayError, match="includes itself"):
            sqlfiles.load_sql("a")
    finally:
        sqlfiles._index.cache_clear()
