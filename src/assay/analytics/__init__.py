"""The analytics over run history as Ibis expressions: history, pairing, regress per slice, stage rollups, sweeps.

Every expression reads the warehouse's tables and views by name (``runs``, ``complete_runs``, ``eval_questions``,
``measure_values``, ``stage_attribution``, ``sweep_points``...) through an Ibis backend, so the same code runs on
DuckDB (a warehouse, or a lake read with DuckDB) and on any backend that has tables of those names (Spark over a
lake). Only standard Ibis operations are used: filters, joins, unions, group-bys; nothing engine-specific.

The statistics that need every number in memory (means printed to the last digit, bootstrap intervals, paired
score tests) stay in Python and read the per-question values the expressions produce, ordered as
the code before Ibis ordered them, so every output is identical.

``connect(source)`` gives the Ibis backend of:

- an Ibis backend: itself;
- an object whose ``ibis`` (or ``ibis_backend``) attribute is one, or a method returning one (the Spark lake
  reader's ``ibis`` is Ibis's PySpark backend on its session, the lake's tables and views registered by name);
- a warehouse, or a lake reader, holding a DuckDB connection (``.con``): an Ibis DuckDB backend over that very
  connection (no second open, the same transaction and temporary views).

A brief warehouse (``Warehouse.brief``) holds no connection: ``opened(warehouse)`` opens it read-only for a block.
"""

from __future__ import annotations

from contextlib import contextmanager

from assay.core.errors import AssayError


def connect(source):
    """The Ibis backend over ``source`` (see the module docstring)."""
    from assay.core.extras import require

    require("ibis", "Ibis expressions over a warehouse or lake")
    import ibis

    if isinstance(source, ibis.BaseBackend):
        return source
    for name in ("ibis_backend", "ibis"):
        provider = getattr(source, name, None)
        if isinstance(provider, ibis.BaseBackend):
            return provider
        if callable(provider):
            return provider()
    import duckdb

    con = getattr(source, "con", None)
    if isinstance(con, duckdb.DuckDBPyConnection):
        if int(duckdb.__version__.split(".")[0]) < 2:
            # DuckDB 1.5 plans a join's bloom filter into a scan of an Arrow table (Ibis's memtables) and then
            # refuses it ("Pushdown Filter Type BLOOM_FILTER is not currently supported in PyArrow Scans"); without
            # that one optimisation the plan is the same but for the filter. DuckDB 2 needs none of this.
            con.execute("SET disabled_optimizers = 'join_filter_pushdown'")
        return ibis.duckdb.from_connection(con)
    raise AssayError(f"{type(source).__name__} holds no connection Ibis can use; open the warehouse with "
                     "Warehouse.open(path, read_only=True), or give an object whose `ibis` is an Ibis backend")


@contextmanager
def opened(warehouse):
    """``(warehouse, Ibis backend)`` for a block: a brief warehouse is opened read-only for just that long."""
    from assay.store.warehouse import BriefWarehouse

    if isinstance(warehouse, BriefWarehouse):
        with warehouse.reading() as wh:
            yield wh, connect(wh)
        return
    yield warehouse, connect(warehouse)
