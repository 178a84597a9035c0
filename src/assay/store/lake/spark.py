"""The lake on Apache Spark: the same measure, report and history SQL, run by Spark SQL.

Every lake table is read from its Hive partitions (``LAKE/<table>/run_id=<RUN_ID>/*.parquet``) and
registered as a temporary view under its warehouse name, with the warehouse's columns and types (taken
from ``sql/migrations`` applied to an in-memory DuckDB); a table no run has written is an empty view of
that schema. Shared tables (corpora, chunks, gold...) are read from the shared parts the visible runs use
(``LAKE/_shared/<table>/<key>.parquet``, assay.store.lake.shared; which ones is read from the runs' ``runs`` files on
the driver, with DuckDB) and from the per-run copies of runs written before that layout, and are kept
once per key (``assay.store.lake.SHARED_KEYS``), the first run's copy as the DuckDB reader keeps it; that is done
once, by the first query that reads the table, and cached (Spark's memory-and-disk cache) until ``close``, since
every view joins them (``cache_shared=False``: deduplicated again by every query instead). A command that never
reads them (`assay lake runs`) never pays for them. Then every view of the migrations is created, in order.

SQL is written for DuckDB (the warehouse) and translated once per text with sqlglot
(``read="duckdb", write="spark"``) plus two steps of our own: a sum's ORDER BY is dropped (Spark has
none), and decimal literals (``1.0``) become DOUBLE.
DuckDB divides a DECIMAL in DOUBLE, Spark in DECIMAL with a scale capped at a few digits, so
``COUNT(*) * 1.0 / $k`` would lose precision on Spark; as doubles both engines compute the same value.
Parameters stay parameters: ``$name`` becomes a Spark named marker ``:name`` and ``?`` a positional one,
bound through ``spark.sql(text, args=...)``; no value is ever formatted into SQL text.

One SparkSession per process (``local[*]`` unless ``spark_master`` or ``ASSAY_SPARK_MASTER`` names a
cluster: ``spark://host:7077``, ``yarn``, ``k8s://...``); each opened lake gets its own child session
(``newSession``), so two lakes never see each other's views. On a cluster the lake directory must be
readable at the same path by every executor (a shared file system), or the lake is on an object store.

An ``s3://`` lake is listed on the driver through pyarrow (assay.store.lake.location, as the DuckDB reader lists
it: only committed runs) and its files are read by Spark as ``s3a://`` URLs, which needs Hadoop's S3 connector
(``hadoop-aws``) on the classpath; PySpark from PyPI has none. ``open_spark_lake`` asks the JVM for
``S3AFileSystem`` before it reads anything and, when it is missing, says in one line what to add. The endpoint
and region go to S3A as options of each read; S3A finds the credentials itself (the same AWS variables).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from assay.core.errors import AssayError, ConfigError
from assay.store.lake import SHARED_KEYS, hidden
from assay.store.lake.location import lake_location
from assay.store.lake.reader import runs_file_refs, visible_runs
from assay.store.lake.segments import holdings
from assay.store.lake.spark_preflight import check_java, check_master, start_failure
from assay.core.sqlfiles import load_sql, migrations

DEFAULT_MASTER = "local[*]"
MASTER_ENV = "ASSAY_SPARK_MASTER"

# DuckDB column types of the migrations' tables, as Spark SQL types. TIMESTAMP in DuckDB has no time zone.
SPARK_TYPES = {
    "VARCHAR": "string", "INTEGER": "int", "BIGINT": "bigint", "DOUBLE": "double", "BOOLEAN": "boolean",
    "TIMESTAMP": "timestamp_ntz", "BLOB": "binary", "SMALLINT": "smallint", "FLOAT": "float", "DATE": "date",
}

# Spark logs INFO/WARN lines to stderr from the JVM's first moment; this file quiets them before setLogLevel can
# (the repl logger too: PySpark starts Spark as a shell, which otherwise announces its own log level).
LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""

_session = None  # the process's SparkSession (the root every lake's child session shares a context with)
_scratch: Path | None = None


def _scratch_dir() -> Path:
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="assay-spark-"))
        atexit.register(shutil.rmtree, _scratch, True)
    return _scratch


def spark_session(spark_master: str | None = None, **conf):
    """The process's SparkSession, started on the first call; later calls reuse it (their settings must agree)."""
    global _session
    from assay.core.extras import require

    require("spark", "the spark engine")  # pyspark and Ibis (`make install` has them, `make demo` does not)
    master = spark_master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
    if _session is not None and _session.sparkContext._jsc is not None:
        running = _session.sparkContext.master
        if spark_master and running != master:
            raise ConfigError(f"Spark is already running on {running} in this process; it cannot also run on "
                              f"{master} (one SparkSession per process)")
        return _session
    check_java()  # both in a moment, before a JVM: Spark's own failure for an unreachable master takes ~100 s
    check_master(master)
    from pyspark.sql import SparkSession
    scratch = _scratch_dir()
    log4j = scratch / "log4j2.properties"
    log4j.write_text(LOG4J2, encoding="utf-8")
    settings = {
        "spark.app.name": "assay",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": str(scratch / "spark-warehouse"),
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log4j} -Dderby.system.home={scratch}",
        "spark.sql.session.timeZone": "UTC",
        # run_id=20261130T... must stay a string: our schema says so, never Spark's guess from the directory name
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    }
    if master.startswith("local"):
        settings["spark.sql.shuffle.partitions"] = "8"  # 200 tasks per shuffle only slow one machine down
    for key, value in conf.items():  # the caller's JVM options join the ones above (logging, scratch directory)
        java = key == "spark.driver.extraJavaOptions"
        settings[key] = f"{settings[key]} {value}" if java else str(value)
    builder = SparkSession.builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        _session = builder.getOrCreate()
    except Exception as exc:  # the JVM or the SparkContext did not start: say why in one line
        raise start_failure(master, exc) from exc
    _session.sparkContext.setLogLevel("ERROR")
    return _session


# ---------------------------------------------------------------------------------------------------- schema


@lru_cache(maxsize=None)
def warehouse_tables() -> dict[str, tuple[tuple[str, str], ...]]:
    """{table: ((column, spark type), ...)} for every table the migrations create, columns in order, and every
    lake table that is a view in a warehouse (``hits``: a lake stores its rows whole)."""
    import duckdb

    from assay.store.lake import LAKE_TABLES

    con = duckdb.connect()
    try:
        for _, _, sql in migrations():
            con.execute(sql)
        rows = con.execute(
            "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema "
            "WHERE t.table_type = 'BASE TABLE' OR list_contains(?, t.table_name) "
            "ORDER BY c.table_name, c.ordinal_position", [list(LAKE_TABLES)]).fetchall()
    finally:
        con.close()
    tables: dict[str, list] = {}
    for table, column, dtype in rows:
        if dtype not in SPARK_TYPES:
            raise AssayError(f"column {table}.{column} has type {dtype}, which the spark engine does not map; "
                             "add it to assay.store.lake.spark.SPARK_TYPES")
        tables.setdefault(table, []).append((column, SPARK_TYPES[dtype]))
    return {t: tuple(cols) for t, cols in tables.items()}


@lru_cache(maxsize=None)
def migration_views() -> tuple[tuple[str, str], ...]:
    """(name, Spark SQL of its SELECT) for every CREATE [OR REPLACE] VIEW of the migrations, in order."""
    import duckdb
    import sqlglot
    from sqlglot import exp

    views = []
    for _, _, sql in migrations():
        for statement in duckdb.extract_statements(sql):
            if not statement.query.strip():  # DuckDB 1.x splits ADD COLUMN ... DEFAULT into statements without text
                continue
            tree = sqlglot.parse_one(statement.query, read="duckdb")
            if isinstance(tree, exp.Create) and tree.kind == "VIEW":
                views.append((tree.this.name, _spark_sql(tree.expression)))
    return tuple(views)


# ---------------------------------------------------------------------------------------------------- SQL


def _double_literals(node):
    """A decimal literal as a DOUBLE (see the module docstring: DuckDB divides decimals in DOUBLE)."""
    from sqlglot import exp

    if isinstance(node, exp.Literal) and node.is_number and any(c in node.this for c in ".eE"):
        return exp.Cast(this=node.copy(), to=exp.DataType.build("DOUBLE"))
    return node


def _unordered_sums(node):
    """``SUM(x ORDER BY rank)`` as ``SUM(x)``: Spark has no ordered sums. The measure SQL orders its float
    sums so DuckDB gives a value bit for bit whatever order rows arrive in; Spark sums in its own order, and
    parity with DuckDB holds to rounding (tests/store/lake/test_spark_parity.py)."""
    from sqlglot import exp

    if isinstance(node, exp.Order) and isinstance(node.parent, exp.Sum) and node.this is not None:
        return node.this.copy()
    return node


def _spark_sql(tree) -> str:
    return tree.transform(_double_literals).transform(_unordered_sums).sql(dialect="spark")


@lru_cache(maxsize=512)
def translate(sql: str) -> tuple[str, tuple[str, ...], int]:
    """DuckDB SQL as Spark SQL, with the names of its ``$name`` parameters and its count of ``?`` ones."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except ParseError as exc:
        raise ConfigError(f"the spark engine cannot read this SQL: {str(exc).splitlines()[0]}") from None
    if len(trees) != 1:
        raise ConfigError(f"the spark engine runs one statement at a time, got {len(trees)}")
    tree = trees[0]
    named, positional = [], 0
    for p in tree.find_all(exp.Placeholder, exp.Parameter):
        name = p.name
        if name and name != "?" and not name.isdigit():
            if name not in named:
                named.append(name)
        else:
            positional += 1
    return _spark_sql(tree), tuple(named), positional


class _Result:
    """What ``con.execute`` returns: ``description`` (items whose ``[0]`` is a column name) and ``fetchall()``."""

    def __init__(self, columns: list[str], rows: list[tuple]):
        self.description = [(c,) for c in columns]
        self._rows = rows

    def fetchall(self) -> list[tuple]:
        return self._rows

    def fetchone(self):
        return self._rows[0] if self._rows else None


def _python(value):
    return float(value) if isinstance(value, Decimal) else value


class SparkConnection:
    """The DB-API corner the lake interface asks for: ``execute(sql, params)`` on DuckDB SQL."""

    def __init__(self, session):
        self.session = session

    def execute(self, sql: str, params=None) -> _Result:
        text, named, positional = translate(sql)
        if isinstance(params, dict):
            missing = [n for n in named if n not in params]
            if missing:
                raise ConfigError(f"SQL parameter(s) {', '.join('$' + m for m in missing)} not given")
            args = {n: params[n] for n in named}
        else:
            args = list(params or [])
            if len(args) != positional:
                raise ConfigError(f"the SQL has {positional} ? parameter(s), {len(args)} value(s) given")
        df = self.session.sql(text, args=args or None)
        rows = [tuple(_python(v) for v in row) for row in df.collect()]
        return _Result(df.columns, rows)


# ---------------------------------------------------------------------------------------------------- the lake


# The derived views the standard measures read (sql/measures/*.sql): what ``SparkLake.cache_views`` keeps.
MEASURE_VIEWS = ("eval_questions", "unit_counts", "ideal_gains", "judged_ranking", "budget_hits")


class SparkLake:
    """A lake read by Spark SQL: the lake interface of ``assay.store.lake`` (``query``, ``con``, ``resolve_run_id``...)."""

    engine = "spark"

    def __init__(self, path, session, cache_shared: bool = True):
        self.location = lake_location(path)
        self.path = self.location.path
        self.session = session
        self.cache_shared = cache_shared
        self.con = SparkConnection(session)
        self._ibis = None
        self.tables: list[str] = []
        self._cached: list = []
        self._cached_views: list[str] = []
        self._register()

    def _register(self) -> None:
        """Every table as a temporary view over the partitions of the runs visible now (as the DuckDB reader)."""
        from pyspark.sql import functions as F

        known = warehouse_tables()
        location = self.location.snapshot()  # as of now: each table listed once, the segments' runs read once
        self.run_ids = visible_runs(location)
        found = holdings(location)
        found.use_shared(runs_file_refs(location, self.run_ids))  # the shared parts the runs use
        present = {name for name in location.children() if not hidden(name)}
        for table in sorted(set(known) | present):
            columns = known.get(table)
            loose, held = found.files(table, self.run_ids)
            held = held + found.shared_files(table, self.run_ids)  # like a segment's: run_id in the file
            if not location.local:  # the same objects, through Hadoop's S3 connector
                loose, held = ([("s3a" + f.removeprefix(location.scheme)) for f in fs] for fs in (loose, held))
            if not loose and not held:
                if columns is None:
                    continue
                df = self.session.createDataFrame([], _ddl(columns))
            else:
                # an explicit schema: a column a file lacks (written before its migration) reads as NULL
                file_columns = None if columns is None else (
                    columns if any(c == "run_id" for c, _ in columns) else columns + (("run_id", "string"),))
                df = self._read(location, table, loose, held, file_columns)
            if columns is not None and (loose or held):  # (a table no migration declares: as its files hold it)
                if table in SHARED_KEYS:
                    df = _first_copy(df, SHARED_KEYS[table], [c for c, _ in columns])
                    if self.cache_shared:
                        # deduplicated once, by the first query that reads it, and kept (memory, then disk):
                        # every view joins these. Not filled here: at open that cost 20 of 28 s on five demo
                        # runs, for commands (`lake runs`) that read none of them.
                        df = df.cache()
                        self._cached.append(df)
                else:
                    df = df.select(*[F.col(c) for c, _ in columns])
            df.createOrReplaceTempView(table)
            self.tables.append(table)
        for name, select in migration_views():
            if name not in self.tables:  # `hits`: the lake's files, not the warehouse's view of its hit tables
                self.session.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {select}")

    def _read(self, location, table, loose, held, file_columns):
        """``table``'s rows from its per-run partitions (``loose``, Hive-partitioned under the table) and from compacted
        segments (``held``: no run_id= in their path, the column is in the file), one DataFrame. Beside segments the
        partitions are read as plain files too (``run_id`` from the file, not the path): a union of a partitioned and
        an unpartitioned scan fails in Spark 4.0 under dynamic partition pruning ("IN dynamicpruning has not
        finished")."""
        frames = []
        base = location.uri(table, scheme="s3a") if not held else None
        for files, base in ((loose, base), (held, None)):
            if not files:
                continue
            reader = self.session.read.options(**s3a_options(location))
            if base is not None:
                reader = reader.option("basePath", base)
            if file_columns is not None:
                reader = reader.schema(_ddl(file_columns))
            frames.append(reader.parquet(*files))
        df = frames[0]
        for more in frames[1:]:
            df = df.unionByName(more, allowMissingColumns=True)
        return df

    def query(self, name: str, **params):
        """Run the named file of ``sql/`` with bound parameters; returns (column names, rows)."""
        cur = self.con.execute(load_sql(name), params)
        return [d[0] for d in cur.description], cur.fetchall()

    # the warehouse's own resolution, so the messages are the same
    from assay.store.warehouse import Warehouse as _Warehouse

    resolve_run_id = _Warehouse.resolve_run_id
    del _Warehouse

    @property
    def ibis(self):
        """An Ibis connection (the PySpark backend) over this lake's tables and views."""
        if self._ibis is None:
            import ibis

            self._ibis = ibis.pyspark.connect(self.session)
        return self._ibis

    def cache_views(self, names=MEASURE_VIEWS) -> None:
        """Compute the derived views ``names`` once, for every run of the lake, and keep them (memory, then disk)
        until ``close``: each measure query then filters them instead of joining hits, chunks and gold again.
        Worth it when many runs are computed (``run_means``: every run of the lake); a query about one run
        pays for every run. The values are the same either way (the views are the same plan, evaluated once)."""
        for name in names:
            if name not in self._cached_views:
                self.session.catalog.cacheTable(name)
                self._cached_views.append(name)
                self.session.table(name).count()  # filled now, not by the first query (see _register)

    def close(self) -> None:
        for name in self._cached_views:
            self.session.catalog.uncacheTable(name)
        self._cached_views = []
        for name in [v for v, _ in reversed(migration_views())] + self.tables:
            self.session.catalog.dropTempView(name)
        for df in self._cached:
            df.unpersist()
        self.tables, self._cached = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_copy(df, keys, columns):
    """One row per key, the copy of the first run by id (as the DuckDB reader keeps it). A shared row repeats
    in every run that needs it. Not ``dropDuplicates``: Spark 4.0 fails to plan that under a correlated
    subquery (the EXISTS of citation_precision: "Couldn't find doc_id")."""
    from pyspark.sql import functions as F

    rest = [c for c in columns if c not in keys]
    first = F.min_by(F.struct(*rest), F.col("run_id")).alias("_first")
    return df.groupBy(*keys).agg(first).select(*keys, "_first.*").select(*columns)


def _ddl(columns) -> str:
    return ", ".join(f"`{c}` {t}" for c, t in columns)


def s3a_options(location) -> dict[str, str]:
    """What S3A needs to reach the lake's store beyond credentials: its endpoint (path-style addressing, as
    pyarrow uses for one) and region; nothing for a local lake."""
    if location.local:
        return {}
    options = {"fs.s3a.endpoint.region": location.region}
    if location.endpoint:
        options.update({"fs.s3a.endpoint": location.endpoint, "fs.s3a.path.style.access": "true",
                        "fs.s3a.connection.ssl.enabled": str(location.endpoint.startswith("https://")).lower()})
    return options


S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"


def check_s3a(session, location) -> None:
    """Before any read of an s3:// lake: the JVM has Hadoop's S3 connector, else one line saying what to add."""
    jvm = session.sparkContext._jvm
    if jvm.org.apache.spark.util.Utils.classIsLoadable(S3A_CLASS):
        return
    version = jvm.org.apache.hadoop.util.VersionInfo.getVersion()
    raise ConfigError(f"lake {location}: this Spark cannot read s3:// (no S3 connector: {S3A_CLASS} is not on its "
                      f"classpath); add spark.jars.packages=org.apache.hadoop:hadoop-aws:{version} (this Spark's "
                      "Hadoop version) to spark-defaults.conf, or the cluster's own S3 connector, or use --engine "
                      "duckdb; nothing was read")


def open_spark_lake(path, spark_master: str | None = None, cache_shared: bool = True, **conf) -> SparkLake:
    """A lake reader on Spark. ``path``: a directory, ``s3://bucket/prefix`` or a LakeLocation; ``spark_master``:
    where Spark runs (default ``local[*]``, or ``ASSAY_SPARK_MASTER``); ``cache_shared``: deduplicate and cache the
    shared tables at open (see the module docstring); ``conf``: further Spark settings
    (``{"spark.executor.memory": "8g"}``), applied when the session starts."""
    location = lake_location(path)
    root = spark_session(spark_master, **conf)
    if not location.local:
        check_s3a(root, location)
    return SparkLake(location, root.newSession(), cache_shared=cache_shared)
