"""The BI snapshot: a read-only copy of the warehouse that BI tools connect to, so none of them ever holds the lock
a run needs to write.

DuckDB lets a file be open read-write by one process or read-only by several, never both: a BI tool (Superset,
Metabase, an ODBC client) connected to the warehouse all day would make every ``assay run`` wait for its lock,
and fail. So after a run is stored, assay copies the warehouse into ``<name>-bi.duckdb`` beside it
(``snapshot_path``): every table (but the embedding cache, which nothing but a dense run reads) and every view,
written under a temporary name and renamed into place. A reader connected to the old snapshot keeps reading the
file it opened (the rename replaces the name, not the file); a new connection opens the new one. The copy is a
warehouse of this schema, so assay's own read commands read it too (``--warehouse warehouse/assay-bi.duckdb``).

Refreshed after each stored run (``refresh``) where the project asks for it: ``[warehouse] snapshot = true`` in
assay.toml, or ``--snapshot`` (assay.inputs.project.snapshot_enabled); off by default, since the copy's time and
disk grow with the warehouse and only a project with BI readers needs it. A failed refresh is one warning line: the run is
stored whatever happens here. `assay snapshot` publishes on demand (``publish``). docs/bi.md says why a copy
and not views over Parquet, and what it costs.
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SUFFIX = "-bi"
# The embedding cache: no measure, view or report reads it, and a dense run's vectors make it the largest table.
LEFT_OUT = ("embeddings",)
TEMPORARY = ".assay-bi-"  # a copy being written: core/scratch.py names it for its process


def snapshot_path(warehouse) -> Path:
    """Where the snapshot of ``warehouse`` is published: ``warehouse/assay.duckdb`` -> ``warehouse/assay-bi.duckdb``."""
    warehouse = Path(warehouse)
    return warehouse.with_name(f"{warehouse.stem}{SUFFIX}{warehouse.suffix or '.duckdb'}")


@dataclass
class Published:
    path: Path
    runs: int
    bytes: int
    seconds: float


def refresh(warehouse) -> Published | None:
    """After a run is stored in ``warehouse``: publish its snapshot, unless ``warehouse.snapshot`` (the command's
    --snapshot/--no-snapshot; None: assay.toml's ``[warehouse] snapshot``, default off) asks for it. Never raises
    for a failure to publish (the run is stored): says it in one warning line and returns None."""
    from assay.inputs.project import snapshot_enabled

    path = getattr(warehouse, "path", None)
    if path is None or not Path(path).is_file():
        return None  # an in-memory warehouse (a lake run's reads, evaluate_run) has no file to copy
    try:
        if not snapshot_enabled(getattr(warehouse, "snapshot", None)):
            return None
        return publish(warehouse)
    except Exception as exc:  # the run is committed: nothing here may fail it or undo it
        from assay.core import progress

        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        progress.say(f"warning: the BI snapshot {snapshot_path(path)} was not refreshed ({reason}); the run is "
                     "stored, and BI tools read the previous snapshot until `assay snapshot` publishes a new one",
                     warning=True)
        return None


def publish(warehouse) -> Published:
    """Copy ``warehouse`` (a Warehouse, or a BriefWarehouse, which opens it read-only for the copy) to its snapshot
    path, atomically: a copy under a temporary name in the same directory, then renamed over the old snapshot.
    Publishers on one machine take turns (a lock on the directory), so the last rename is of the newest copy."""
    from assay.core import scratch

    target = snapshot_path(warehouse.path)
    folder = target.parent
    t0 = time.perf_counter()
    with _turn(folder):
        for leftover, _ in scratch.stale(folder, TEMPORARY):  # a copy whose process died before its rename
            leftover.unlink(missing_ok=True)
        temporary = folder / f"{scratch.name(TEMPORARY)}{target.name}"
        try:
            with warehouse.reading() as wh:
                runs = _copy(wh.con, temporary)
            os.chmod(temporary, stat.S_IMODE(os.stat(warehouse.path).st_mode))
            os.replace(temporary, target)
        finally:
            for made in (temporary, Path(f"{temporary}.wal")):
                made.unlink(missing_ok=True)
    return Published(target, runs, target.stat().st_size, time.perf_counter() - t0)


def _copy(con, temporary: Path) -> int:
    """Every table but ``LEFT_OUT``, and every view and macro, of ``con``'s database into a new file; returns how
    many runs it holds. DETACH checkpoints the file: nothing of it is left in a journal."""
    (source,) = con.execute("SELECT current_database()").fetchall()[0]
    src = _quoted(source)
    # DuckDB 1.x takes no parameter for ATTACH's path: a literal, its quotes doubled
    con.execute(f"ATTACH '{str(temporary).replace(chr(39), chr(39) * 2)}' AS assay_bi (READ_WRITE)")
    try:
        con.execute(f"COPY FROM DATABASE {src} TO assay_bi (SCHEMA)")
        tables = [name for name, in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
            "ORDER BY table_name", [source]).fetchall()]
        con.execute("BEGIN TRANSACTION")
        try:
            for table in tables:
                if table not in LEFT_OUT:
                    con.execute(f"INSERT INTO assay_bi.main.{_quoted(table)} SELECT * FROM {src}.main.{_quoted(table)}")
            (runs,) = con.execute("SELECT COUNT(*) FROM assay_bi.main.runs").fetchall()[0]
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.execute("DETACH assay_bi")
    return runs


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def _turn(folder: Path):
    """Hold an exclusive lock on ``folder`` (a lock on the directory itself: no lock file is left beside the
    snapshot). Where there is no flock (Windows), publishers do not take turns."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
