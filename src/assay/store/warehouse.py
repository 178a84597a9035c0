"""The DuckDB warehouse: connection, numbered migrations, and the writes that record runs.

A run is written in one transaction: a failure or interrupt anywhere before the
commit leaves the warehouse exactly as it was.

DuckDB lets one process open a file read-write, or many open it read-only. So
nothing holds the file longer than it must: every open waits a bounded time
(``ASSAY_LOCK_WAIT`` seconds, default 30) for another process's lock, and a run
uses ``Warehouse.brief``: reads through short read-only opens, each write
through one short read-write transaction.
"""

from __future__ import annotations

import os
import re
import stat
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from assay.core.errors import ConfigError, WarehouseError, WarehouseLocked
from assay.core.hashing import canonical_json
from assay.inputs.project import warehouse_path
from assay.core.sqlfiles import latest_migration, load_sql, migrations

BUDGET_MIGRATION = 10  # the migration that added token tables; older runs are tokenized when it applies
COMPACT_MIGRATION = 13  # hits stored compactly: a warehouse that had hits is rewritten once after it (_rewrite)
UNKEYED_TOKENS_MIGRATION = 15  # token tables rewritten without their keys: likewise, when it had token rows
MEMO_MIGRATION = 16  # the interval memo (assay.measures.memo)


def resolve_path(path: str | os.PathLike | None) -> Path:
    """--warehouse PATH, else $ASSAY_WAREHOUSE, else the project's warehouse (assay.inputs.project: [warehouse] path
    of the assay.toml in effect, else warehouse/assay.duckdb beside it, else in the current directory)."""
    return warehouse_path(path)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


# -- opening: bounded waits for the lock, one line for a damaged file ----------------------------
LOCK_WAIT_VAR = "ASSAY_LOCK_WAIT"
DEFAULT_LOCK_WAIT_S = 30.0
WAITING = "waiting for the warehouse lock held by"
# What DuckDB says when a file is not a database it can read: damage, truncation, another format.
_DAMAGE = ("not a valid DuckDB database", "Corrupt database file", "Could not read enough bytes",
           "checksum", "database file is corrupt", "Failed to read database header")


def lock_wait_s() -> float:
    """Seconds an open waits for another process's lock: $ASSAY_LOCK_WAIT, default 30."""
    raw = os.environ.get(LOCK_WAIT_VAR, "").strip()
    if not raw:
        return DEFAULT_LOCK_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ConfigError(f"{LOCK_WAIT_VAR}={raw!r} is not a number of seconds (0 or more)")
    return value


class LockHolder:
    """The process DuckDB names as holding a warehouse's lock, and whether it is an assay command: a BI tool or a
    notebook connected to the warehouse holds it as surely as a writing assay does, and the advice differs."""

    def __init__(self, pid: int | None, argv: list[str] | None):
        self.pid, self.argv = pid, argv

    @classmethod
    def of(cls, exc) -> "LockHolder | None":
        """The holder named in ``exc``, DuckDB failing to take the file lock ("Conflicting lock is held in PROGRAM
        (PID n)"); None for any other failure. Its command line is read from /proc/PID/cmdline where there is one."""
        text = str(exc)
        if "Could not set lock" not in text:
            return None
        found = re.search(r"\(PID (\d+)\)", text)
        pid = int(found.group(1)) if found else None
        return cls(pid, command_line(pid) if pid is not None else None)

    @property
    def is_assay(self) -> bool | None:
        """Whether the holder runs the assay command (``assay ...``, ``python -m assay ...``); None when its command
        line cannot be read (no /proc, another user's process, one that has ended)."""
        if not self.argv:
            return None
        program = self.argv[:2]  # the script itself (argv[0]), or the script an interpreter runs (argv[1])
        if any(Path(arg).name == "assay" for arg in program):
            return True
        return any(arg == "-m" and nxt == "assay" for arg, nxt in zip(self.argv[:3], self.argv[1:4]))

    def __str__(self) -> str:
        if self.pid is None:
            return "another process"
        if self.is_assay:
            return f"another assay process (PID {self.pid})"
        if self.is_assay is None:
            return f"another process (PID {self.pid})"
        import shlex

        shown = shlex.join(self.argv)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        return f"PID {self.pid} ({shown}), not an assay command"

    def advice(self, path: Path) -> str:
        """What to do once the wait is over."""
        if self.is_assay:
            return f"try again when it finishes, or set {LOCK_WAIT_VAR}=SECONDS to wait longer"
        from assay.store.snapshot import snapshot_path

        return (f"a program that holds the warehouse open (a BI tool, a notebook) blocks every write to it: point it "
                f"at the read-only snapshot {snapshot_path(path)} instead (`[warehouse] snapshot = true` in assay.toml "
                f"publishes it after each run, `assay snapshot` now; docs/bi.md) and close its connection, or set {LOCK_WAIT_VAR}=SECONDS to wait longer")


def command_line(pid: int) -> list[str] | None:
    """Process ``pid``'s arguments from /proc/PID/cmdline; None where they cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    argv = [arg.decode("utf-8", "replace") for arg in raw.split(b"\0")]
    if argv and argv[-1] == "":
        argv.pop()
    return argv or None


def damage_error(exc, path) -> WarehouseError | None:
    """The one-line error for a DuckDB failure that means the file is damaged; None for any other failure."""
    text = str(exc)
    if not any(marker in text for marker in _DAMAGE):
        return None
    detail = text.splitlines()[0].strip()
    return WarehouseError(
        f"warehouse {path} is damaged or truncated ({detail}); assay cannot repair it: restore it from a "
        "backup, or move it aside and the next `assay run` starts a new warehouse")


def _old_schema_message(path: Path, current: int, writable: bool) -> str:
    """Why an old warehouse was not read, and the one command that upgrades it."""
    head = f"warehouse {path} has schema version {current}, this assay needs {latest_migration()}"
    if not writable:
        return (f"{head}, and the file is read-only to you: make it writable and run `assay upgrade` once, or "
                "read it with the assay version that wrote it")
    return (f"{head}; a command that only reads never writes to it: run `assay upgrade --warehouse {path}` once "
            "(then every command reads it; older assay versions no longer can), or read it with the assay "
            "version that wrote it")


def _check_file(path: Path) -> None:
    """Refuse what is not a regular file before DuckDB opens it (a FIFO would block the open forever)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WarehouseError(f"cannot open warehouse {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise WarehouseError(f"warehouse {path} is {kind}; give --warehouse the path of a warehouse file")


def check_writable(path: Path) -> None:
    """Before a command that computes, then writes (run, sweep, ablate, demo, assay.evaluate), does any work: will
    its write succeed? A warehouse it could not write is otherwise found at the end, after every question (and
    every paid model request) of the run. The file must be writable and so must its directory (DuckDB keeps the
    file's journal, ``NAME.wal``, beside it), and it must open: not damaged, not of a schema newer than this assay
    (an older one is upgraded now, as the write would upgrade it). That open is read-only, as every read of a run
    is, so other readers are not kept waiting, and it does not wait for a writer's lock: a file another assay is
    writing to opens for it, and the write at the end waits for the lock as every write does. Nothing is held while
    the command computes. A file that does not exist yet is not created: the nearest existing directory above it
    must be one this process can write into."""
    path = Path(path)
    _check_file(path)
    then = "; nothing was run"
    if path.exists():
        if not os.access(path, os.W_OK):
            raise WarehouseError(f"warehouse {path} is read-only to you and this command writes its results there "
                                 f"at the end{then}: make it writable (chmod u+w {path}) or give --warehouse "
                                 "another file")
        folder = path.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise WarehouseError(f"warehouse {path} cannot be written: its directory {folder} is read-only to you, "
                                 f"and DuckDB writes the file's journal ({path.name}.wal) there{then}: make the "
                                 "directory writable or give --warehouse a file in another")
        try:
            Warehouse.open(path, read_only=True, wait_s=0, old_schema="upgrade").close()
        except WarehouseLocked:
            pass
        return
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise WarehouseError(f"cannot create warehouse {path}: {ancestor} is not a directory{then}; give "
                             "--warehouse a path in a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise WarehouseError(f"cannot create warehouse {path}: {ancestor} is read-only to you{then}; give "
                             "--warehouse a path in a directory you can write to")


def engine():
    """DuckDB for a read: the package ``duckdb`` where it is loaded, else its compiled module ``_duckdb``.

    ``duckdb.connect`` and ``duckdb.Error`` are the compiled module's own objects, and so are a connection's
    ``execute``, ``fetchall``, ``description``, ``extract_statements`` and ``interrupt``: all a read uses. The
    package around them adds the relation API in Python (``con.sql``, ``con.table``, Arrow sources) and asks
    importlib.metadata for its version, ~45 ms of import, more than a report's queries take. Whatever imports
    ``duckdb`` later gets the whole package, and connections opened before gain its methods (they are set on
    the connection's class). Writes use the package (``connect(..., read_only=False)``): they register Arrow
    data. Another DuckDB layout falls back to the package."""
    import sys

    module = sys.modules.get("duckdb")
    if module is None:
        try:
            import _duckdb as module
        except ImportError:
            module = None
        if module is None or not all(hasattr(module, name) for name in ("connect", "Error", "DuckDBPyConnection")):
            import duckdb as module
    return module


def connect(path: Path, read_only: bool, config: dict | None = None, wait_s: float | None = None):
    """A DuckDB connection to ``path``, waiting up to ``wait_s`` (default $ASSAY_LOCK_WAIT) for another
    process's lock; says once on stderr that it waits. Every failure is a one-line WarehouseError (a file a newer
    DuckDB wrote: assay.store.file_version)."""
    if read_only:
        duckdb = engine()
    else:
        import duckdb

    _check_file(path)
    wait_s = lock_wait_s() if wait_s is None else wait_s
    deadline, delay, said = time.monotonic() + wait_s, 0.02, False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=dict(config or {}))
        except duckdb.Error as exc:
            holder = LockHolder.of(exc)
            if holder is None:
                from assay.store.file_version import newer_error

                raise newer_error(exc, path, duckdb.__version__) or damage_error(exc, path) or WarehouseError(
                    f"cannot open warehouse {path}: {str(exc).splitlines()[0]}") from None
            left = deadline - time.monotonic()
            if left <= 0:
                writing = " that is writing to it" if holder.is_assay else ""
                raise WarehouseLocked(
                    f"warehouse {path} is locked by {holder}{writing}, and stayed locked for {wait_s:g} s; "
                    f"{holder.advice(path)}") from None
            if not said:
                from assay.core import progress

                progress.say(f"{WAITING} {holder} on {path} (up to {wait_s:g} s)...", warning=True)  # above any bar
                said = True
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.5)
            continue
        JOURNAL.last_path = path
        return con


_RUNNING: set = set()  # connections whose statement an interrupt must stop: DuckDB does not stop on SIGINT alone


@contextmanager
def interruptible(con):
    """While inside, ``interrupt_queries()`` (the CLI's SIGINT handler) interrupts ``con``'s statement."""
    _RUNNING.add(con)
    try:
        yield con
    finally:
        _RUNNING.discard(con)


def interrupt_queries() -> None:
    JOURNAL.interrupted = True
    for con in list(_RUNNING):
        con.interrupt()


class Journal:
    """What this process asked warehouses to keep, so an interrupt can say truly what was kept.

    ``pending`` holds (path, run id) of runs whose transaction has begun and not ended; ``stored`` the
    runs whose COMMIT returned; ``vectors`` the embedding vectors committed; ``commits`` every commit.
    """

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.pending, self.stored, self.vectors, self.commits, self.last_path = [], [], 0, 0, None
        self.interrupted = False
        self.sweep = None  # {"sweep_id", "total", "runs"} while `assay sweep` runs: the run ids of its points

    def after_interrupt(self, stopped: str = "interrupted") -> str:
        """The one line an interrupted command prints, beginning with ``stopped`` (how it was stopped)."""
        line = self._after_interrupt()
        return stopped + line.removeprefix("interrupted")

    def _after_interrupt(self) -> str:
        stored = [run_id for _, run_id in self.stored]
        unsure = []
        for path, run_id in self.pending:  # the interrupt came during or right after COMMIT: ask the file
            found = _run_stored(path, run_id)
            if found:
                stored.append(run_id)
            elif found is None:
                unsure.append(run_id)
        if unsure:
            return (f"interrupted while run {', '.join(unsure)} was being written; `assay runs` shows whether it "
                    "was stored (a run is stored whole or not at all)")
        done = sum(run_id in self.sweep["runs"] for run_id in stored) if self.sweep is not None else 0
        if done:
            sweep_id, total = self.sweep["sweep_id"], self.sweep["total"]
            return (f"interrupted after {done} of the {total} points of sweep {sweep_id} were stored, each a "
                    f"complete run; `assay report --sweep {sweep_id}` shows them")
        if stored:
            return f"interrupted after run {', '.join(stored)} was stored"
        if self.vectors:
            return (f"interrupted; no run was written, and the {self.vectors} embedding vectors computed so far "
                    "are stored for the next run to reuse")
        if self.commits:
            return "interrupted after its write was committed; nothing is half-written"
        return "interrupted; nothing was written"


def _run_stored(path: Path, run_id: str) -> bool | None:
    try:
        con = connect(path, read_only=True, wait_s=5.0)
    except Exception:
        return None
    try:
        return bool(con.execute("SELECT COUNT(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0])
    except Exception:
        return None
    finally:
        con.close()


JOURNAL = Journal()


class Warehouse:
    # Whether a run stored here refreshes the BI snapshot (assay.store.snapshot.refresh): True or False (a
    # command's --snapshot/--no-snapshot), None for assay.toml's [warehouse] snapshot (default off).
    snapshot: bool | None = None

    def __init__(self, path: Path, con, read_only: bool):
        self.path, self.con, self.read_only = path, con, read_only

    @classmethod
    def open(cls, path=None, read_only: bool = False, config: dict | None = None,
             old_schema: str = "refuse", wait_s: float | None = None, snapshot: bool | None = None) -> "Warehouse":
        """A connection held until ``close``. Read-write creates and upgrades the file. Read-only never writes:
        a file of an older schema is refused with a line naming `assay upgrade` (``old_schema="refuse"``, what
        every command that only reads does), read as it is (``"read"``: `assay sql`, which says so), or upgraded
        first (``"upgrade"``: the reads of a writing command, a run's brief opens, which write next anyway); a
        file this process may not write to reads fine. ``config``: DuckDB settings of a read-only connection
        (`assay sql` locks them down). ``wait_s``: how long the open waits for another process's lock (default
        $ASSAY_LOCK_WAIT). ``snapshot``: whether a run stored through it refreshes the BI snapshot (None: the
        project's setting; ``Warehouse.snapshot``)."""
        path = resolve_path(path)
        if not path.exists():
            from assay.inputs.project import COMMAND, outside_project

            outside = outside_project(path)
            if read_only:
                why = f" ({outside}, so the default here)" if outside else ""
                raise WarehouseError(f"no warehouse at {path}{why}; `assay run` or `assay ingest` creates one")
            if outside:  # a second warehouse in a subfolder of a project would otherwise go unnoticed
                COMMAND.warn(f"note: {outside}; using ./{path}, a new warehouse (`assay init` makes a project)")
        created = not read_only and not path.exists()
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
        con = connect(path, read_only, config if read_only else None, wait_s=wait_s)
        wh = cls(path, con, read_only)
        wh.snapshot = snapshot
        try:
            current = wh.schema_version() if read_only else None
            if read_only and current < latest_migration():
                writable = os.access(path, os.W_OK)
                if old_schema == "read":
                    from assay.core import progress

                    progress.say(f"note: warehouse {path} has schema version {current}, this assay's is "
                                 f"{latest_migration()}: read as it is, not upgraded (`assay upgrade` upgrades it)")
                    return wh
                if old_schema != "upgrade" or not writable:
                    raise WarehouseError(_old_schema_message(path, current, writable))
                con.close()
                cls.open(path, read_only=False).close()
                con = connect(path, read_only=True, config=config)
                wh = cls(path, con, read_only)
                wh.snapshot = snapshot
                current = None
            if current != latest_migration():  # an up-to-date file read: nothing to check again
                wh._migrate()
        except Exception as exc:
            wh.con.close()
            from assay.core.files import no_room

            if created and no_room(exc):  # a new file the schema never reached: no empty shell left to trip on
                for made in (path, Path(f"{path}.wal")):
                    made.unlink(missing_ok=True)
            damaged = damage_error(exc, path)
            if damaged is not None:
                raise damaged from None
            raise
        return wh

    @classmethod
    def upgrade(cls, path=None) -> tuple[Path, int, int]:
        """Apply the pending migrations to an existing warehouse (`assay upgrade`): (its path, the schema version
        before, the version now). Never creates one."""
        path = resolve_path(path)
        if not path.exists():
            raise WarehouseError(f"no warehouse at {path}; give --warehouse the file to upgrade")
        con = connect(path, read_only=True)
        try:
            before = cls(path, con, read_only=True).schema_version()
        except Exception as exc:
            raise damage_error(exc, path) or exc from None
        finally:
            con.close()
        if before >= latest_migration():
            if before > latest_migration():
                raise WarehouseError(f"warehouse {path} has schema version {before}, newer than this assay "
                                     f"knows ({latest_migration()}); upgrade assay")
            return path, before, before
        if not os.access(path, os.W_OK):
            raise WarehouseError(_old_schema_message(path, before, False))
        with cls.open(path) as wh:
            return path, before, wh.schema_version()

    @classmethod
    def brief(cls, path=None, old_schema: str = "upgrade", snapshot: bool | None = None) -> "BriefWarehouse":
        """A warehouse that holds no connection: each read opens it read-only and closes it, each
        ``transaction()`` opens it read-write for just that long. What a run uses while it computes. Its reads
        upgrade an old warehouse first, since a run writes next; a command that only reads gives
        ``old_schema="refuse"`` (see ``open``); ``snapshot`` as in ``open``."""
        wh = BriefWarehouse(resolve_path(path), old_schema)
        wh.snapshot = snapshot
        return wh

    def close(self) -> None:
        self.con.close()

    def check_writable(self) -> None:
        """Before work that ends in a write: an open read-only warehouse cannot take it (``check_writable``)."""
        if self.read_only:
            raise WarehouseError(f"warehouse {self.path} is open read-only and this call writes a run to it; "
                                 "nothing was run: pass a warehouse opened for writing, or its path")

    @contextmanager
    def reading(self):
        """A warehouse to read several statements from (this one: it holds its connection)."""
        yield self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- schema --------------------------------------------------------------------------
    def schema_version(self) -> int:
        # the table read directly, its absence an error: asking the catalog first (duckdb_tables(), ~6 ms cold;
        # information_schema.tables ~30 ms) cost more than the read, on every command
        try:
            return self.con.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchall()[0][0]
        except engine().CatalogException:
            return 0

    def _migrate(self) -> None:
        current, latest = self.schema_version(), latest_migration()
        if current > latest:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, newer than this assay knows ({latest}); upgrade assay"
            )
        if current == latest:
            return
        pending = [m for m in migrations() if m[0] > current]
        if self.read_only:
            raise WarehouseError(
                f"warehouse {self.path} has schema version {current}, this assay needs {latest}; "
                "run `assay upgrade` once to upgrade it"
            )
        rewrite = None  # what the upgrade rewrote, leaving the old blocks free: the file is then copied once
        if 0 < current < COMPACT_MIGRATION and self._exists("hits", "TRUE", []):
            rewrite = ("hits stored compactly", "old hits")
        elif BUDGET_MIGRATION <= current < UNKEYED_TOKENS_MIGRATION and self._exists("doc_tokens", "TRUE", []):
            rewrite = ("token tables stored without their keys", "old token tables")
        with self.transaction(journal=False):
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
            )
            for version, name, sql in pending:
                self.con.execute(sql)
                self.con.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)", [version, name, _now()]
                )
                if version == BUDGET_MIGRATION:  # runs recorded before budgets get their token counts
                    from assay.store.tokens import backfill

                    backfill(self)
        if rewrite:
            self._rewrite(*rewrite)

    def _rewrite(self, what: str = "hits stored compactly", space: str = "old hits") -> None:
        """Put a copy of the warehouse in place of its file. Migration 013 leaves the blocks of the old hits
        table free (015 those of the keyed token tables), and DuckDB keeps a file's free blocks for later writes instead of giving them back: without
        this a warehouse of a hundred runs stays its old size until hundreds more fill it. Skipped with a note
        when the copy cannot be made (a full disk): the warehouse is whole either way."""
        import duckdb

        from assay.core import progress

        temporary = self.path.with_name(f".{self.path.name}.rewrite-{os.getpid()}")
        before = self.path.stat().st_size
        try:
            (name,) = self.con.execute("SELECT current_database()").fetchall()[0]
            self.con.execute("CHECKPOINT")  # nothing left in the WAL, which belongs to the old file
            # DuckDB 1.x takes no parameter (nor expression) for ATTACH's path: a literal, its quotes doubled
            self.con.execute(f"ATTACH '{str(temporary).replace(chr(39), chr(39) * 2)}' AS assay_rewrite")
            try:
                self.con.execute(f'COPY FROM DATABASE "{name.replace(chr(34), chr(34) * 2)}" TO assay_rewrite')
            finally:
                self.con.execute("DETACH assay_rewrite")
            os.chmod(temporary, stat.S_IMODE(self.path.stat().st_mode))
            os.replace(temporary, self.path)  # while this connection still holds the old file's lock
        except BaseException as exc:  # an interrupt too: the upgraded file stays, the copy goes
            for leftover in (temporary, Path(f"{temporary}.wal")):
                leftover.unlink(missing_ok=True)
            if not isinstance(exc, (duckdb.Error, OSError)):
                raise
            progress.say(f"note: warehouse {self.path} was upgraded but not rewritten to give back the space its "
                         f"{space} took ({str(exc).splitlines()[0]}); it fills that space before it grows")
            return
        self.con.close()
        self.con = connect(self.path, read_only=False)
        progress.say(f"note: warehouse {self.path} upgraded: {what}, the file rewritten "
                     f"({before / 1e6:.1f} MB -> {self.path.stat().st_size / 1e6:.1f} MB)")

    @contextmanager
    def transaction(self, journal: bool = True):
        """One transaction; ``journal=False`` keeps it out of what an interrupt reports (schema upgrades)."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            with interruptible(self.con):
                yield
        except BaseException as exc:
            JOURNAL.pending.clear()  # before the rollback: a second interrupt may cut it, and it is undone anyway
            room = self._no_room(exc)
            try:
                self.con.execute("ROLLBACK")
            except Exception:
                if room is None:
                    raise
            if room is not None:
                raise room from None
            raise
        try:
            self.con.execute("COMMIT")
        except Exception as exc:
            JOURNAL.pending.clear()
            room = self._no_room(exc)
            if room is not None:
                raise room from None
            raise
        JOURNAL.commits += journal
        JOURNAL.stored += JOURNAL.pending
        JOURNAL.pending.clear()

    def _no_room(self, exc) -> WarehouseError | None:
        """The one line for a write to this warehouse refused for want of room (a full disk, a file size limit);
        DuckDB undoes the transaction, so nothing of it was written."""
        from assay.core.files import no_room

        why = no_room(exc)
        if why is None:
            return None
        return WarehouseError(f"cannot write to warehouse {self.path}: {why} ({str(exc).splitlines()[0]}); nothing "
                              "of this command was stored: make room on its disk, then run the command again")

    # -- reads ---------------------------------------------------------------------------
    def query(self, name: str, **params):
        """Run the named SQL file with bound parameters; returns (column names, rows)."""
        cur = self.con.execute(load_sql(name), params)
        return [d[0] for d in cur.description], cur.fetchall()

    def resolve_run_id(self, run_ref: str | None) -> str:
        """The complete run ``run_ref`` names: latest, latest~N, previous, an id, a name or a unique part of an id
        (assay.store.run_refs)."""
        from assay.store.run_refs import resolve

        return resolve(self, run_ref, complete=True)

    # -- writes --------------------------------------------------------------------------
    def _insert(self, table: str, columns: list[str], rows: list[tuple]) -> None:
        if not rows:
            return
        from assay.store.rows import registered

        with registered(self.con, "_assay_rows", {c: [r[i] for r in rows] for i, c in enumerate(columns)}):
            cols = ", ".join(columns)
            self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _assay_rows")

    def _exists(self, table: str, where: str, params: list) -> bool:
        return self.con.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchall()[0][0] > 0

    def write_corpus(self, corpus) -> bool:
        """Store a corpus unless its hash is already there. Returns whether documents were written. A corpus
        read from a directory (``skipped`` not None) replaces the stored list of files not read either way:
        files that are not read do not change the hash, so the latest reading says what the directory holds."""
        h = corpus.corpus_hash
        if corpus.skipped is not None:
            self.con.execute("DELETE FROM corpus_skipped WHERE corpus_hash = ?", [h])
            self._insert("corpus_skipped", ["corpus_hash", "path", "extension", "reason"],
                         [(h, s.path, s.extension, s.reason) for s in corpus.skipped])
        if self._exists("corpora", "corpus_hash = ?", [h]):
            return False
        self._insert(
            "corpora", ["corpus_hash", "root", "n_documents", "total_bytes", "ingested_at", "readers"],
            [(h, str(corpus.root), len(corpus.documents), sum(d.byte_size for d in corpus.documents), _now(),
              canonical_json(corpus.readers) if corpus.readers else None)],
        )
        self._insert(
            "documents", ["corpus_hash", "doc_id", "text", "byte_size", "sha256", "format", "encoding",
                          "encoding_source"],
            [(h, d.doc_id, d.text, d.byte_size, d.sha256, d.format, d.encoding, d.encoding_source)
             for d in corpus.documents],
        )
        self._insert(
            "document_pages", ["corpus_hash", "doc_id", "page", "start_char", "end_char"],
            [(h, d.doc_id, i, start, end) for d in corpus.documents for i, (start, end) in enumerate(d.pages, 1)],
        )
        return True

    def write_chunks(self, chunk_set: str, corpus_hash: str, chunker_config: dict, chunks) -> None:
        from assay.core.hashing import sha256_text

        if self._exists("chunk_sets", "chunk_set = ?", [chunk_set]):
            return
        self._insert(
            "chunk_sets", ["chunk_set", "corpus_hash", "chunker", "n_chunks", "created_at"],
            [(chunk_set, corpus_hash, canonical_json(chunker_config), len(chunks), _now())],
        )
        self._insert(
            "chunks", ["chunk_set", "chunk_id", "doc_id", "ordinal", "start_char", "end_char", "text", "text_sha256"],
            [(chunk_set, c.chunk_id, c.doc_id, c.ordinal, c.start, c.end, c.text, sha256_text(c.text)) for c in chunks],
        )
        from assay.store.hits import write_chunk_keys

        write_chunk_keys(self, chunk_set, chunks)

    def write_judgments(self, judgments, corpus_hash: str, gold) -> None:
        h = judgments.sha256
        if not self._exists("judgment_sets", "judgments_hash = ?", [h]):
            self._insert(
                "judgment_sets", ["judgments_hash", "source_path", "n_queries", "loaded_at"],
                [(h, str(judgments.path), len(judgments.judgments), _now())],
            )
            self._insert(
                "queries",
                ["judgments_hash", "query_id", "query_text", "category", "form", "hard_class", "unanswerable", "notes", "line"],
                [(h, j.query_id, j.query, j.category, j.form, j.hard_class, j.unanswerable, j.notes, j.line)
                 for j in judgments.judgments],
            )
            self._insert(
                "judgment_gold", ["judgments_hash", "query_id", "gold_idx", "doc_id", "quote", "grade"],
                [(h, j.query_id, i, g.doc, g.quote, g.grade) for j in judgments.judgments for i, g in enumerate(j.gold)],
            )
        if not self._exists("gold_spans", "judgments_hash = ? AND corpus_hash = ?", [h, corpus_hash]):
            self._insert(
                "gold_spans",
                ["judgments_hash", "corpus_hash", "query_id", "gold_idx", "doc_id", "quote", "grade", "start_char", "end_char"],
                [(h, corpus_hash, g.query_id, g.gold_idx, g.doc_id, g.quote, g.grade, g.start, g.end) for g in gold],
            )

    # what a derived run (a rescore, a revalidation) copies from its source, per table
    DERIVED = {"run_queries": "query_id, latency_ms, n_results", "hits": "query_id, stage, list_key, through_rank",
               "stage_latency": "query_id, stage, latency_ms", "run_stages": "stage, position",
               "answer_raw": "query_id, attempt, mode, raw", "answer_context": "query_id, position, chunk_id"}
    # hits are copied as list rows that read the source's stored rows (assay.store.hits): nothing else is repeated
    STORED_AS = {"hits": "hit_lists"}

    def derive_run(self, source: str, kind: str, config: dict, judgments_hash: str | None = None,
                   tables=tuple(DERIVED), keep: list[str] | None = None) -> str:
        """A new run (``kind``, linked by ``source_run_id``) that reuses ``source``'s stored retrieval.

        Copies the source's rows of ``tables`` (only the questions in ``keep`` when given). Runs inside
        the caller's transaction; returns the new run id.
        """
        import secrets

        from assay.core.hashing import config_hash

        now = _now()
        run_id = f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
        self.con.execute(
            "INSERT INTO runs (run_id, started_at, finished_at, status, pipeline, config, config_hash, corpus_hash, "
            "judgments_hash, chunk_set, assay_version, versions, git_commit, seed, tie_break, stats, kind, "
            "source_run_id, gate_eligible, tokenizer_id) SELECT ?, ?, ?, status, pipeline, ?, ?, corpus_hash, "
            "COALESCE(?, judgments_hash), chunk_set, assay_version, versions, git_commit, seed, tie_break, stats, "
            "?, run_id, gate_eligible, tokenizer_id FROM runs WHERE run_id = ?",
            [run_id, now, now, canonical_json(config), config_hash(config), judgments_hash, kind, source])
        if keep is not None:
            from assay.store.rows import as_table

            self.con.register("_assay_keep", as_table({"query_id": keep}))
        try:
            for table in tables:
                cols, stored = self.DERIVED[table], self.STORED_AS.get(table, table)
                only = (" AND query_id IN (SELECT query_id FROM _assay_keep)"
                        if keep is not None and cols.startswith("query_id") else "")
                self.con.execute(f"INSERT INTO {stored} (run_id, {cols}) SELECT ?, {cols} FROM {stored} "
                                 f"WHERE run_id = ?{only}", [run_id, source])
        finally:
            if keep is not None:
                self.con.unregister("_assay_keep")
        # No measure value is copied from the source: the caller scores the new run against its own judgments
        # and answers (assay.measures.values.score_run), in this transaction.
        return run_id

    def write_run(self, record) -> None:
        """Everything a run produced, in one transaction: its rows, no measure value (the warehouse knows tables,
        not measures; assay.runs.sinks.store_run writes a run with its values)."""
        with self.transaction():
            self.write_run_rows(record)

    def write_run_rows(self, record) -> None:
        """Everything a run produced, inside the caller's transaction (a sweep writes all its runs in one)."""
        JOURNAL.pending.append((self.path, record.run_id))
        self.write_corpus(record.corpus)
        self.write_chunks(record.chunk_set, record.corpus.corpus_hash, record.config["chunker"], record.chunks)
        self.write_judgments(record.judgments, record.corpus.corpus_hash, record.gold)
        from assay.store.tokens import write_tokens

        tokenizer_id = write_tokens(self, record.corpus.corpus_hash, record.chunk_set)
        self._insert(
            "runs",
            ["run_id", "started_at", "finished_at", "status", "pipeline", "config", "config_hash", "corpus_hash",
             "judgments_hash", "chunk_set", "assay_version", "versions", "git_commit", "seed", "tie_break",
             "stats", "gate_eligible", "tokenizer_id", "sweep_id"],
            [(record.run_id, record.started_at, record.finished_at, record.status, record.config["pipeline"],
              canonical_json(record.config), record.config_hash, record.corpus.corpus_hash,
              record.judgments.sha256, record.chunk_set, record.versions["assay"],
              canonical_json(record.versions), record.git_commit, record.config["seed"],
              record.config["tie_break"], canonical_json(record.stats), record.gate_eligible, tokenizer_id,
              record.sweep_id)],
        )
        # no index keeps these unique (migration 014): a run gives each question, and each stage of it, once
        _refuse_repeats(record.run_id, record.query_rows, 1, "question")
        _refuse_repeats(record.run_id, record.stage_latency, 2, "stage latency of question and stage")
        self._insert("run_queries", ["run_id", "query_id", "latency_ms", "n_results"],
                     [(record.run_id, *row) for row in record.query_rows])
        from assay.store.hits import write_hits

        write_hits(self, record.run_id, record.chunk_set, record.hits, record.stages)
        self._insert("run_stages", ["run_id", "stage", "position"],
                     [(record.run_id, stage, i) for i, stage in enumerate(record.stages, 1)])
        self._insert("stage_latency", ["run_id", "query_id", "stage", "latency_ms"],
                     [(record.run_id, *row) for row in record.stage_latency])
        if record.answers or record.model_requests:
            from assay.retrieval.answer.stage import (ANSWER_COLUMNS, CITATION_COLUMNS, CLAIM_COLUMNS, CONTEXT_COLUMNS,
                                            RAW_COLUMNS)

            for table, cols, rows in (("answers", ANSWER_COLUMNS, record.answers),
                                      ("claims", CLAIM_COLUMNS, record.claims),
                                      ("citations", CITATION_COLUMNS, record.citations),
                                      ("answer_raw", RAW_COLUMNS, record.answer_raw),
                                      ("answer_context", CONTEXT_COLUMNS, record.answer_context)):
                self._insert(table, ["run_id"] + cols, [(record.run_id, *r) for r in rows])
            self._insert("model_requests", ["run_id", "seq", "query_id", "started_at", "latency_ms", "status",
                                            "error", "rate_limited", "retry", "waited_s"],
                         [(record.run_id, *r) for r in record.model_requests])
            self._insert("claim_judgments", ["run_id", "query_id", "claim_idx", "judge_model", "verdict", "raw",
                                             "error"], [(record.run_id, *r) for r in record.claim_judgments])


def _refuse_repeats(run_id: str, rows, width: int, what: str) -> None:
    """A WarehouseError when two of ``rows`` share their first ``width`` values."""
    seen = set()
    for row in rows:
        key = tuple(row[:width])
        if key in seen:
            raise WarehouseError(f"run {run_id}: {what} {' / '.join(map(str, key))} given twice; a run records "
                                 "each once")
        seen.add(key)


class _Fetched:
    """A statement's result, fetched whole, standing in for a DuckDB cursor."""

    def __init__(self, description, rows):
        self.description, self._rows = description, rows

    def fetchall(self) -> list:
        return self._rows

    def fetchone(self):
        return self._rows[0] if self._rows else None


class _ShortReads:
    """Stands in for a connection outside a transaction: each ``execute`` opens the warehouse read-only, fetches
    the whole result and closes it, so no lock is held between statements."""

    def __init__(self, warehouse: "BriefWarehouse"):
        self._warehouse = warehouse

    def execute(self, sql: str, params=None) -> _Fetched:
        with self._warehouse.reading() as wh:
            cur = wh.con.execute(sql) if params is None else wh.con.execute(sql, params)
            return _Fetched(cur.description, cur.fetchall() if cur.description else [])

    def __getattr__(self, name):
        raise AttributeError(f"a brief warehouse only executes statements outside a transaction; use "
                             f"`with warehouse.reading() as wh:` for {name}")


class BriefWarehouse(Warehouse):
    """A warehouse that holds no connection while its owner computes (see ``Warehouse.brief``).

    Outside ``transaction()``, ``con.execute`` reads through a short read-only open; inside, ``con`` is a
    read-write connection held for that transaction only. A file that does not exist yet reads as an empty
    warehouse and is created (and migrated) by the first write.
    """

    def __init__(self, path: Path, old_schema: str = "upgrade"):
        super().__init__(path, _ShortReads(self), read_only=False)
        self.old_schema = old_schema

    @contextmanager
    def reading(self):
        if not self.path.exists():
            import duckdb

            empty = Warehouse(self.path, duckdb.connect(":memory:"), read_only=False)
            try:
                empty._migrate()
                yield empty
            finally:
                empty.close()
            return
        with Warehouse.open(self.path, read_only=True, old_schema=self.old_schema) as wh:
            yield wh

    @contextmanager
    def transaction(self, journal: bool = True):
        reads = self.con
        with Warehouse.open(self.path) as wh:
            self.con = wh.con
            try:
                with wh.transaction(journal):
                    yield
            finally:
                self.con = reads

    def check_writable(self) -> None:
        check_writable(self.path)

    def close(self) -> None:
        """Nothing is held between statements, so nothing to close."""
