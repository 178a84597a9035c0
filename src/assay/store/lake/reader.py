"""Reading a lake with DuckDB: an in-memory database whose tables are views over the lake's Parquet files.

The migrations are applied to an empty in-memory database first, so every table exists with the
warehouse's columns and types and every view of the migrations is there. Then each table that has
partitions is dropped and replaced by a view of the same name over its files (DuckDB binds views by
name when they are queried, so the migrations' views read the lake). `hits`, a view over the compact hit
tables in a warehouse (assay.store.hits), is stored whole in a lake and replaced the same way. A run's own tables are read as
they are; shared tables keep one row per key. The lake is read as of the open: the runs are those
whose ``runs`` partition existed then, and every table reads only those runs' partitions. A compacted lake
(assay.store.lake.segments) adds, per table, a second ``read_parquet`` over its days' current segment files, without
Hive partitioning (the ``run_id`` column is in the file), joined to the first by name; a run is read from one of
the two, never both, so deduplicating shared rows by key gives what it gave before compaction. Shared tables also
read the shared parts (assay.store.lake.shared) that the visible runs' ``runs`` rows name, the same way (the
``run_id`` in the file): ``runs`` is made a view first, and its rows say which parts the other tables read.

Files are listed through the lake's pyarrow file system (assay.store.lake.location): one recursive listing per
table, which on an object store is one paginated LIST, not a request per run. A local lake's files are handed to
DuckDB by path. An object store's are read through the same pyarrow ``S3FileSystem``, registered on the connection
as an fsspec file system (``ArrowFSWrapper``, protocol ``s3``): DuckDB's httpfs extension is downloaded at its first
use, which an offline machine cannot do, and this way every request of the reader and the writer goes through one
client with one set of credentials, timeouts and retries. It is chosen over handing DuckDB pyarrow datasets
because the views stay ``read_parquet`` over a file list, exactly as for a local lake (Hive partitioning, union by
name, the damaged-file checks), and DuckDB still reads only the columns and row groups a query needs, by range
requests. The cost is requests: every query opens the files of the views it reads, and each open is one HEAD
(pyarrow opens by path) besides the GETs; sizes and times come from the listing (``register_store``). On the
loopback test server, `assay lake compute` of two demo runs and two measures sends ~430 requests and takes ~4.5 s
against ~1.3 s on a local copy; a lake of many runs on a distant store will want compaction (fewer, larger files).
"""

from __future__ import annotations

from assay.store.lake import LAKE_TABLES, PARTITION_FILE, SHARED_KEYS, hidden
from assay.store.lake.location import lake_location
from assay.store.lake.segments import holdings
from assay.store.lake.shared import PART_KEYS, run_refs
from assay.core.errors import WarehouseError
from assay.store.warehouse import Warehouse


def visible_runs(lake) -> list[str]:
    """Run ids whose ``runs`` partition is in place (the commit of a run) or that a current compacted segment holds
    (assay.store.lake.segments), oldest id first."""
    return holdings(lake).run_ids


def partition_files(lake, table: str, run_ids: list[str]) -> list[str]:
    """Every file holding ``table``'s rows of ``run_ids``: per-run partition files, compacted segments', then the
    shared parts they use (assay.store.lake.shared; known once a reader has read the runs)."""
    found = holdings(lake)
    loose, held = found.files(table, run_ids)
    return loose + held + found.shared_files(table, run_ids)


def runs_of(lake, file) -> list[str]:
    """The runs whose rows ``file`` holds: a partition file's run (``.../run_id=<RUN_ID>/part-0.parquet``), or every
    run of a compacted segment."""
    return holdings(lake).runs_of(file)


def runs_file_refs(location, run_ids) -> list[dict]:
    """``run_refs`` of ``run_ids`` read from their ``runs`` files (partitions and compacted segments) with DuckDB."""
    import duckdb

    loose, held = holdings(location).files("runs", run_ids)
    files = loose + held
    if not files:
        return []
    con = duckdb.connect(":memory:")
    try:
        if not location.local:
            register_store(con, location)
        return run_refs(con, run_ids, "read_parquet(?, union_by_name = true, hive_partitioning = false)", [files])
    finally:
        con.close()


def _unreadable(con, files: list[str], whole: bool = False) -> dict[str, str]:
    """Those of ``files`` whose Parquet footer DuckDB cannot read (truncated, not Parquet), each with its reason;
    ``whole``: whose rows it cannot read either (a damaged page behind a sound footer)."""
    from assay.store.warehouse import engine

    read = "SELECT * FROM read_parquet(?)" if whole else "SELECT COUNT(*) FROM parquet_file_metadata(?)"
    bad = {}
    for file in files:
        try:
            cur = con.execute(read, [file])
            while cur.fetchmany(10_000):
                pass
        except engine().Error as exc:
            lines = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
            # a failed request through the registered file system arrives as Python's traceback: its last line
            first = lines[-1] if lines[0].startswith("Traceback") else lines[0]
            why = first.replace(f" '{file}'", "").replace(f" \"{file}\"", "")
            bad[file] = why.split("Error: ", 1)[-1]  # DuckDB's kind of error says nothing to the reader
    return bad


class DuckDBLake(Warehouse):
    """A lake read through DuckDB: the Warehouse read interface (``con``, ``query``, ``resolve_run_id``).
    ``damaged``: the runs left out because a file of theirs is not readable Parquet, each with (file, reason)."""

    engine = "duckdb"

    def __init__(self, path, con, run_ids: list[str], damaged: dict[str, tuple[str, str]] | None = None):
        location = lake_location(path)
        super().__init__(location.path, con, read_only=True)
        self.location = location
        self.run_ids = run_ids
        self.damaged = damaged or {}

    def transaction(self, journal: bool = True):
        raise NotImplementedError("a lake is read-only: `assay run --lake` adds runs to it")

    def __exit__(self, kind, exc, tb):
        """A DuckDB failure inside, when a file of the lake is damaged past its footer (found only by reading its
        rows), becomes the one line naming the file."""
        from assay.store.lake import damaged_message
        from assay.store.warehouse import engine

        duckdb = engine()
        # what a query's own text or an interrupt causes: no file to look for
        theirs = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException, duckdb.InterruptException)
        try:
            if isinstance(exc, duckdb.Error) and not isinstance(exc, theirs):
                files = [f for table in LAKE_TABLES for f in partition_files(self.location, table, self.run_ids)]
                bad = _unreadable(self.con, files, whole=True)
                if bad:
                    damaged = {}
                    for f, why in sorted(bad.items()):
                        for run_id in runs_of(self.location, f):
                            damaged.setdefault(run_id, (f, why))
                    raise WarehouseError(damaged_message(self.path, damaged)) from None
        finally:
            self.close()


def open_duckdb_lake(path, **settings) -> DuckDBLake:
    """A DuckDB reader over the lake at ``path`` (a directory, or an assay.store.lake.location.LakeLocation).
    Settings for other engines (``spark_master``) are ignored.

    A run one of whose files DuckDB cannot read as Parquet (truncated, overwritten) is left out whole and named
    in ``damaged``: its other tables would otherwise give half a run. The files are checked one by one only when
    reading a table's files together failed, so a sound lake costs nothing more."""
    from assay.store.lake.writer import memory_warehouse

    location = lake_location(path).snapshot()  # as of now: each table listed once
    run_ids, damaged = visible_runs(location), {}
    while True:
        con = memory_warehouse().con  # every table and view of the migrations, empty
        if not location.local:
            register_store(con, location)
        bad = _views(con, location, run_ids)
        if not bad:
            return DuckDBLake(location, con, run_ids, damaged)
        con.close()  # built over runs now left out: built again without them
        for file, why in sorted(bad.items()):
            for run_id in runs_of(location, file):
                damaged.setdefault(run_id, (file, why))
        run_ids = [r for r in run_ids if r not in damaged]


def register_store(con, location) -> None:
    """Let DuckDB open the lake's ``s3://`` files through its pyarrow file system (see the module docstring).
    A file the snapshot listed is described from its listing: fsspec's wrapper would otherwise send a HEAD
    request each time DuckDB asks a file's size or time (~8 for each file a query reads); opening one still
    sends one (pyarrow's Python API opens by path only)."""
    from fsspec.implementations.arrow import ArrowFSWrapper

    class LakeFiles(ArrowFSWrapper):
        cachable = False  # one per connection: it holds this lake's listings

        def info(self, path, **kwargs):
            known = location.listed(self._strip_protocol(path))
            return self._make_entry(known) if known is not None else super().info(path, **kwargs)

        def modified(self, path):
            known = location.listed(self._strip_protocol(path))
            return known.mtime if known is not None else super().modified(path)

    con.register_filesystem(LakeFiles(location.fs))  # its protocol is "s3": DuckDB routes s3:// here


def _views(con, path, run_ids: list[str]) -> dict[str, str]:
    """Each table of the lake as a view over ``run_ids``' files; {} when done, else the unreadable files found
    (the caller leaves their runs out and asks again)."""
    from assay.store.warehouse import engine

    for table in LAKE_TABLES:
        columns = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                              "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
                              [table]).fetchall()
        hold = holdings(path)
        loose, held = hold.files(table, run_ids) if columns else ([], [])
        if columns and table in PART_KEYS:  # shared parts: like a segment's files, run_id in the file
            held = held + hold.shared_files(table, run_ids)
        files = loose + held
        if not files:
            continue  # no run has rows here: the empty table stands
        parts = []
        if loose:
            con.execute(f"SET VARIABLE assay_lake_{table} = ?", [loose])
            parts.append(f"read_parquet(getvariable('assay_lake_{table}'), hive_partitioning = true, "
                         "union_by_name = true, hive_types = {'run_id': VARCHAR})")
        if held:  # compacted segments: no run_id= in their path, the column is in the file
            con.execute(f"SET VARIABLE assay_lake_{table}_compacted = ?", [held])
            parts.append(f"read_parquet(getvariable('assay_lake_{table}_compacted'), hive_partitioning = false, "
                         "union_by_name = true)")
        source = (parts[0] if len(parts) == 1
                  else "(" + " UNION ALL BY NAME ".join(f"SELECT * FROM {p}" for p in parts) + ")")
        try:
            found = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        except engine().Error:
            bad = _unreadable(con, files)
            if not bad:
                raise
            return bad
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
        if table == "runs":  # first of LAKE_TABLES: the runs' rows name the shared parts the other tables read
            try:
                refs = run_refs(con, run_ids)
            except engine().Error:  # a page damaged behind a sound footer
                bad = _unreadable(con, files, whole=True)
                if not bad:
                    raise
                return bad
            hold.use_shared(refs)
    return {}
