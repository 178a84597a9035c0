"""Reading a lake with DuckDB: an in-memory database whose tables are views over the lake's Parquet files.

The migrations are applied to an empty in-memory database first, so every table exists with the
warehouse's columns and types and every view of the migrations is there. Then each table that has
partitions is dropped and replaced by a view of the same name over its files (DuckDB binds views by
name when they are queried, so the migrations' views read the lake). `hits`, a view over the compact hit
tables in a warehouse (assay.store.hits), is stored whole in a lake and replaced the same way. A run's own tables are read as
they are; shared tables keep one row per key. The lake is read as of the open: the runs are those
whose ``runs`` partition existed then, and every table reads only those runs' partitions.
"""

from __future__ import annotations

from pathlib import Path

from assay.store.lake import LAKE_TABLES, PARTITION_FILE, SHARED_KEYS, hidden, partition_dir
from assay.store.warehouse import Warehouse


def visible_runs(lake: Path) -> list[str]:
    """Run ids whose ``runs`` partition is in place, oldest id first."""
    root = Path(lake) / "runs"
    if not root.is_dir():
        return []
    return sorted(p.name.split("=", 1)[1] for p in root.iterdir()
                  if p.name.startswith("run_id=") and not hidden(p.name) and (p / PARTITION_FILE).is_file())


def partition_files(lake: Path, table: str, run_ids: list[str]) -> list[str]:
    files = (partition_dir(lake, table, run_id) / PARTITION_FILE for run_id in run_ids)
    return [str(f) for f in files if f.is_file()]


class DuckDBLake(Warehouse):
    """A lake read through DuckDB: the Warehouse read interface (``con``, ``query``, ``resolve_run_id``)."""

    engine = "duckdb"

    def __init__(self, path: Path, con, run_ids: list[str]):
        super().__init__(Path(path), con, read_only=True)
        self.run_ids = run_ids

    def transaction(self, journal: bool = True):
        raise NotImplementedError("a lake is read-only: `assay run --lake` adds runs to it")


def open_duckdb_lake(path: Path, **settings) -> DuckDBLake:
    """A DuckDB reader over the lake at ``path``. Settings for other engines (``spark_master``) are ignored."""
    from assay.store.lake.writer import memory_warehouse

    schema = memory_warehouse()  # every table and view of the migrations, empty
    con = schema.con
    run_ids = visible_runs(path)
    for table in LAKE_TABLES:
        columns = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                              "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
                              [table]).fetchall()
        files = partition_files(path, table, run_ids) if columns else []
        if not files:
            continue  # no run has rows here: the empty table stands
        variable = f"assay_lake_{table}"
        con.execute(f"SET VARIABLE {variable} = ?", [files])
        source = (f"read_parquet(getvariable('{variable}'), hive_partitioning = true, union_by_name = true, "
                  "hive_types = {'run_id': VARCHAR})")
        found = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        # a column no file has (written before its migration) reads as NULL, as in an upgraded warehouse
        select = ", ".join(f"CAST({name} AS {kind}) AS {name}" if name in found else f"CAST(NULL AS {kind}) AS {name}"
                           for name, kind in columns)
        keys = SHARED_KEYS.get(table)
        if keys:
            # a shared row repeats in every run that needs it; keep the first run's copy
            view = (f"SELECT DISTINCT ON ({', '.join(keys)}) {select} FROM {source} "
                    f"ORDER BY {', '.join(keys)}, run_id")
        else:
            view = f"SELECT {select} FROM {source}"
        kind = con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ? "
                           "AND table_schema = 'main'", [table]).fetchall()[0][0]
        con.execute(f"DROP {'VIEW' if kind == 'VIEW' else 'TABLE'} {table}")  # `hits` is a view in a warehouse
        con.execute(f"CREATE VIEW {table} AS {view}")
    return DuckDBLake(path, con, run_ids)
