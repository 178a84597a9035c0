"""Writing one run into a lake: its own partition of every table, without a lock, renamed into place last.

The run is first written as it would be into a warehouse, into an in-memory DuckDB warehouse (so the
rows, their columns and their types are exactly the warehouse's), then each table is written to a
Parquet file under a hidden temporary directory of the lake and renamed into place. That directory is named for
its process (``.tmp-<owner>-<run>``, assay.core.scratch): a writer removes its own whatever ends it but SIGKILL,
SIGABRT or a crash, and the next writer removes what such a process left (``collect_stale``).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from assay.core import scratch
from assay.core.errors import WarehouseError
from assay.store.lake import LAKE_TABLES, PARTITION_FILE, RUN_TABLES, partition_dir

MEMORY = Path(":memory:")
# The rows of a shared table the run needs, beyond what its in-memory warehouse holds: the token
# pieces of the documents its hits reference (the rest of the corpus is never read for this run).
_FILTERS = {"doc_tokens": "WHERE doc_id IN (SELECT doc_id FROM hits)"}
PAUSE_VAR = "ASSAY_TEST_LAKE_PAUSE"  # test hook: seconds to sleep before the `runs` partition is renamed
STAGING = ".tmp-"  # a writer's staging directory: .tmp-<owner>-<run id>


def check_lake(lake) -> None:
    """Before any work: the lake is a directory this process can write into, or one it can create; what killed
    writers left there is removed now (``collect_stale``), so its space is free before the run needs it."""
    lake = Path(lake)
    then = "; nothing was run"
    if lake.exists():
        if not lake.is_dir():
            raise WarehouseError(f"lake {lake} is not a directory{then}; give --lake a directory")
        if not os.access(lake, os.W_OK | os.X_OK):
            raise WarehouseError(f"lake {lake} is read-only to you{then}: make it writable or give --lake another "
                                 "directory")
        collect_stale(lake)
        return
    ancestor = lake.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise WarehouseError(f"cannot create lake {lake}: {ancestor} is "
                             f"{'read-only to you' if ancestor.is_dir() else 'not a directory'}{then}")


def collect_stale(lake: Path) -> list[Path]:
    """Remove what writers that no longer run (killed: SIGKILL, SIGABRT, a crash) left in ``lake``: their staging
    directories, and the partitions of their run when its ``runs`` partition never appeared (no reader sees them;
    the run id is the writer's own, so no other writer has them). A live writer's staging is never touched
    (assay.core.scratch). Returns what was removed."""
    removed = []
    for staging, run_id in scratch.stale(Path(lake), STAGING):
        if not partition_dir(lake, "runs", run_id).exists():
            for table in LAKE_TABLES:
                orphan = partition_dir(lake, table, run_id)
                if orphan.exists():
                    shutil.rmtree(orphan, ignore_errors=True)
                    removed.append(orphan)
        shutil.rmtree(staging, ignore_errors=True)
        removed.append(staging)
    return removed


def memory_warehouse():
    """An empty warehouse in memory, every migration applied."""
    import duckdb

    from assay.store.warehouse import Warehouse

    wh = Warehouse(MEMORY, duckdb.connect(":memory:"), read_only=False)
    wh._migrate()
    return wh


def tables_of(con) -> list[str]:
    # `hits` is a view over the warehouse's compact hit tables (assay.store.hits); the lake keeps its rows whole
    present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return [t for t in LAKE_TABLES if t in present]


def write_run(lake, record, score=None) -> list[Path]:
    """Write ``record`` as its own partitions of the lake at ``lake``; returns the partition directories.
    ``score(warehouse, run_id)``, when given, adds what is computed from the rows (the runner passes the measure
    values: assay.measures.values.score_run) in the same in-memory transaction, so the lake holds them too.

    Nothing outside ``LAKE/.tmp-<owner>-<run>`` changes until every file is written; then each table's
    partition is renamed into place, ``runs`` last, so a reader sees the whole run or none of it. Whatever stops
    the write (a full disk, SIGINT, SIGTERM), the staging directory and every partition renamed so far are removed.
    """
    from assay.store.warehouse import JOURNAL

    lake = Path(lake)
    try:
        lake.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot create lake {lake}: {exc.strerror}") from None
    if not lake.is_dir():
        raise WarehouseError(f"lake {lake} is not a directory")
    collect_stale(lake)
    wh = memory_warehouse()
    try:
        with wh.transaction(journal=False):
            wh.write_run_rows(record)
            if score is not None:
                score(wh, record.run_id)
        # the in-memory write is not a stored run: only the rename below stores it
        JOURNAL.stored[:] = [entry for entry in JOURNAL.stored if entry[0] != MEMORY]
        staging = lake / f"{scratch.name(STAGING)}{record.run_id}"
        try:
            written = _stage(wh.con, staging, record.run_id)
        except BaseException as exc:  # an interrupt too: nothing of the run stays in the lake
            shutil.rmtree(staging, ignore_errors=True)
            room = _no_room(lake, record.run_id, exc)
            if room is not None:
                raise room from None
            if isinstance(exc, OSError):  # pyarrow's and the file system's: a lost mount, a permission
                raise _write_error(lake, record.run_id, exc) from None
            raise
    finally:
        wh.close()
    return _publish(lake, staging, record.run_id, written)


def _no_room(lake: Path, run_id: str, exc: BaseException) -> WarehouseError | None:
    """The one line for a write refused for want of room (a full disk, a file size limit); None otherwise."""
    from assay.core.files import no_room

    why = no_room(exc)
    if why is None:
        return None
    return WarehouseError(f"cannot write run {run_id} into lake {lake}: {why} ({str(exc).splitlines()[0]}); nothing "
                          "of it was stored and its staging directory is removed: make room on the lake's disk, then "
                          "run again")


def _stage(con, staging: Path, run_id: str) -> list[str]:
    """Every table's rows of this run, as Parquet files under ``staging``; returns the tables written."""
    import pyarrow.parquet as pq

    written = []
    for table in tables_of(con):
        where = _FILTERS.get(table, "")
        # the run's own tables carry run_id already; shared ones get it, so every file names its run
        select = (f"SELECT * FROM {table} {where}" if table in RUN_TABLES
                  else f"SELECT CAST(? AS VARCHAR) AS run_id, * FROM {table} {where}")
        data = con.sql(select, params=None if table in RUN_TABLES else [run_id]).to_arrow_table()
        if data.num_rows == 0:
            continue
        target = partition_dir(staging, table, run_id)
        target.mkdir(parents=True)
        path = target / PARTITION_FILE
        pq.write_table(data, path)
        with open(path, "rb") as f:  # the bytes are on disk before the rename makes them visible
            os.fsync(f.fileno())
        written.append(table)
    return written


def _publish(lake: Path, staging: Path, run_id: str, tables: list[str]) -> list[Path]:
    from assay.store.warehouse import JOURNAL

    order = [t for t in tables if t != "runs"] + ["runs"]
    done: list[Path] = []
    try:
        for table in order:
            if table == "runs" and os.environ.get(PAUSE_VAR):
                time.sleep(float(os.environ[PAUSE_VAR]))
            final = partition_dir(lake, table, run_id)
            try:
                final.parent.mkdir(exist_ok=True)
                os.rename(partition_dir(staging, table, run_id), final)
            except OSError as exc:
                raise _no_room(lake, run_id, exc) or WarehouseError(
                    f"cannot write run {run_id} into lake {lake}: {final} ({exc.strerror}); a lake is append-only, "
                    "and run ids are unique") from None
            done.append(final)
        JOURNAL.stored.append((lake, run_id))
    except BaseException:
        for path in done:  # not visible without its runs partition; leave nothing behind either
            shutil.rmtree(path, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return done


def _write_error(lake: Path, run_id: str, exc: OSError) -> WarehouseError:
    """One line for a failed write of the staging files: what failed, and that nothing was left."""
    why = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    return WarehouseError(f"cannot write run {run_id} into lake {lake}: {why}; nothing of it was left there (its "
                          "staging is removed): free space or fix the directory and run again")
