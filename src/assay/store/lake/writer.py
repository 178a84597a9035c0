"""Writing one run into a lake: its own partition of every table, without a lock, ``runs`` published last.

The run is first written as it would be into a warehouse, into an in-memory DuckDB warehouse (so the
rows, their columns and their types are exactly the warehouse's), then each of its own tables becomes one Parquet
file, and each shared table's rows become the shared parts the lake lacks (assay.store.lake.shared: one file per
content key, written once for every run that uses it, before the run's own files and checked again just before its
``runs`` commit; a writer that fails never removes one, as another run may use it).

A local lake: each file is written under a hidden temporary directory of the lake and renamed into place,
``runs`` last. That directory is named for its process (``.tmp-<owner>-<run>``, assay.core.scratch): a writer
removes its own whatever ends it but SIGKILL, SIGABRT or a crash, and the next writer removes what such a process
left (``collect_stale``). The rename stays because it is what a local disk does best: a directory appears whole,
and the owner in the staging name tells a dead writer's leftovers from a live one's at once, with no waiting.

An object store (``s3://``) cannot rename, so there is no staging: each file is written under its final key
(one PUT, or a multipart upload, is atomic: an object appears whole or not at all), every table but ``runs``
first and ``runs`` last. The ``runs`` object is the run's commit marker: readers list only the runs whose ``runs``
object exists and read only those runs' files (assay.store.lake.reader), so a writer stopped at any point leaves
nothing visible. One stopped by SIGINT, SIGTERM or a failed request deletes what it wrote (``runs`` first); what
a killed one left, the next writer removes once its newest object is older than the grace period (``[lake]
orphan_grace_s``, an hour by default: ``collect_orphans``), since on a shared store no process can tell a dead
writer on another machine from a slow one.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from assay.core import scratch
from assay.core.errors import WarehouseError
from assay.store.lake import LAKE_TABLES, PARTITION_FILE, RUN_TABLES, hidden, partition_dir
from assay.store.lake.location import LakeLocation, lake_location, remote_error, table_files
from assay.store.lake.shared import PART_KEYS, ensure_parts

MEMORY = Path(":memory:")
PAUSE_VAR = "ASSAY_TEST_LAKE_PAUSE"  # test hook: seconds to sleep before the `runs` partition is renamed
STAGING = ".tmp-"  # a writer's staging directory: .tmp-<owner>-<run id>


def check_lake(lake) -> None:
    """Before any work: the lake is a directory this process can write into, or one it can create; what killed
    writers left there is removed now (``collect_stale``), so its space is free before the run needs it. An object
    store: it answers, with these credentials, and its bucket exists; old orphans are removed (``collect_orphans``)."""
    location = lake_location(lake)
    if not location.local:
        _check_store(location)
        collect_orphans(location)
        return
    lake = location.path
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


def _check_store(location: LakeLocation) -> None:
    """The store answers and the lake's bucket is there (one HEAD, one LIST): else one line, before any work."""
    from pyarrow import fs as pafs

    try:
        kind = location.fs.get_file_info(location.root.split("/")[0]).type
    except OSError as exc:
        raise remote_error(location, exc, "cannot write") from None
    if kind == pafs.FileType.NotFound:
        raise WarehouseError(f"lake {location}: no bucket {location.root.split('/')[0]} at "
                             f"{location.endpoint or 'AWS S3'}; create it first (assay never creates buckets); "
                             "nothing was run")


def collect_orphans(location: LakeLocation, now: float | None = None) -> list[str]:
    """Remove the objects of runs that were never committed (no ``runs`` object) and whose newest object is older
    than ``location.orphan_grace_s``: what a killed writer left on an object store. A run still being written is
    younger than that and stays. The objects' times are the store's, ``now`` (default: this machine's clock) is
    compared with them, so the grace must exceed the clock skew between the two too. Returns the keys removed."""
    committed = set(table_files(location, "runs"))
    infos = {}  # run id -> [(key, mtime)]
    for table in location.children():
        if hidden(table) or table == "runs":
            continue
        for info in location.files(table):
            parts = info.path[len(location.key(table)):].strip("/").split("/")
            mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
            if len(parts) == 2 and parts[0].startswith("run_id=") and not hidden(parts[0]):
                run_id = parts[0].split("=", 1)[1]
                if run_id not in committed:
                    infos.setdefault(run_id, []).append((info.path, mtime))
    present = time.time() if now is None else now
    removed = []
    for run_id, objects in sorted(infos.items()):
        if present - max(m for _, m in objects) < location.orphan_grace_s:
            continue
        for key, _ in objects:
            try:
                location.fs.delete_file(key)
                removed.append(key)
            except OSError:  # another writer removed it first
                pass
    return removed


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
    An object store gets no staging: see the module docstring (``_write_to_store``).
    """
    location = lake_location(lake)
    if not location.local:
        return _write_to_store(location, record, score)
    lake = location.path
    try:
        lake.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot create lake {lake}: {exc.strerror}") from None
    if not lake.is_dir():
        raise WarehouseError(f"lake {lake} is not a directory")
    collect_stale(lake)
    wh = _in_memory(record, score)
    try:
        staging = lake / f"{scratch.name(STAGING)}{record.run_id}"
        try:
            staging.mkdir()
            # the shared parts the lake lacks, linked into place first (assay.store.lake.shared): a part another
            # run may use is never removed again by this writer, whatever stops it
            ensure_parts(location, wh.con, tables_of(wh.con), record.run_id, staging)
            written = _stage(wh.con, staging, record.run_id)
        except BaseException as exc:  # an interrupt too: nothing of the run stays in the lake
            shutil.rmtree(staging, ignore_errors=True)
            room = _no_room(lake, record.run_id, exc)
            if room is not None:
                raise room from None
            if isinstance(exc, OSError):  # pyarrow's and the file system's: a lost mount, a permission
                raise _write_error(lake, record.run_id, exc) from None
            raise
        # just before the commit, the parts are checked again: one a prune removed meanwhile is written again
        return _publish(lake, staging, record.run_id, written,
                        lambda: ensure_parts(location, wh.con, tables_of(wh.con), record.run_id, staging))
    finally:
        wh.close()


def _in_memory(record, score):
    """The run's rows (and what ``score`` adds) in an in-memory warehouse, closed by the caller."""
    from assay.store.warehouse import JOURNAL

    wh = memory_warehouse()
    try:
        with wh.transaction(journal=False):
            wh.write_run_rows(record)
            if score is not None:
                score(wh, record.run_id)
    except BaseException:
        wh.close()
        raise
    # the in-memory write is not a stored run: only the publish stores it
    JOURNAL.stored[:] = [entry for entry in JOURNAL.stored if entry[0] != MEMORY]
    return wh


def _write_to_store(location: LakeLocation, record, score) -> list[str]:
    """Write the run into an object store: every table under its final key, ``runs`` (the commit) last; on any
    failure or interrupt, delete what was written, ``runs`` first. Returns the keys written."""
    import pyarrow.parquet as pq

    from assay.store.warehouse import JOURNAL

    _check_store(location)
    collect_orphans(location)
    run_id = record.run_id
    wh = _in_memory(record, score)
    attempted: list[str] = []
    try:
        present = tables_of(wh.con)
        ensure_parts(location, wh.con, present, run_id)  # the shared parts the store lacks, kept whatever happens
        tables = [t for t in present if t != "runs" and t not in PART_KEYS] + ["runs"]
        for table in tables:
            data = _rows(wh.con, table, run_id)
            if data is None:
                continue
            if table == "runs" and os.environ.get(PAUSE_VAR):
                time.sleep(float(os.environ[PAUSE_VAR]))
            if table == "runs":  # a part a prune removed meanwhile is written again before the commit
                ensure_parts(location, wh.con, present, run_id)
            key = location.key(table, f"run_id={run_id}", PARTITION_FILE)
            attempted.append(key)
            pq.write_table(data, key, filesystem=location.fs)
        JOURNAL.stored.append((location, run_id))
    except BaseException as exc:  # an interrupt too: nothing of the run stays visible, and little stays at all
        for key in reversed(attempted):  # `runs` first: the run is uncommitted before anything else goes
            try:
                location.fs.delete_file(key)
            except OSError:  # never written, or the store is gone: collect_orphans takes it later
                pass
        if isinstance(exc, OSError):
            raise remote_error(location, exc, f"cannot write run {run_id} into") from None
        raise
    finally:
        wh.close()
    return attempted


def _rows(con, table: str, run_id: str):
    """The run's rows of ``table`` as an Arrow table (shared tables get the run's id), None when it has none."""
    # the run's own tables carry run_id already; interval_memo (shared by key, stored per run) gets it, so every
    # file names its run
    select = (f"SELECT * FROM {table}" if table in RUN_TABLES
              else f"SELECT CAST(? AS VARCHAR) AS run_id, * FROM {table}")
    data = con.sql(select, params=None if table in RUN_TABLES else [run_id]).to_arrow_table()
    return data if data.num_rows else None


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
        if table in PART_KEYS:  # stored once per content key (ensure_parts), not in the run's partitions
            continue
        data = _rows(con, table, run_id)
        if data is None:
            continue
        target = partition_dir(staging, table, run_id)
        target.mkdir(parents=True)
        path = target / PARTITION_FILE
        pq.write_table(data, path)
        with open(path, "rb") as f:  # the bytes are on disk before the rename makes them visible
            os.fsync(f.fileno())
        written.append(table)
    return written


def _publish(lake: Path, staging: Path, run_id: str, tables: list[str], before_commit=None) -> list[Path]:
    from assay.store.warehouse import JOURNAL

    order = [t for t in tables if t != "runs"] + ["runs"]
    done: list[Path] = []
    try:
        for table in order:
            if table == "runs" and os.environ.get(PAUSE_VAR):
                time.sleep(float(os.environ[PAUSE_VAR]))
            final = partition_dir(lake, table, run_id)
            try:
                if table == "runs" and before_commit is not None:
                    before_commit()
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
