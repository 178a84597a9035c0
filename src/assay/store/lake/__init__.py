"""A lake: every run as its own Hive-partitioned Parquet partition of a shared directory.

Layout (a contract: other tools read it)::

    LAKE/<table>/run_id=<RUN_ID>/part-0.parquet

one file per table that has rows of the run's own (``RUN_TABLES``: `runs`, `run_queries`, `hits`, `run_stages`,
`stage_latency`, `measure_values`, the answer tables; and `interval_memo`, keyed by the run's own values). The
shared rows it needs (its corpus and documents, its chunk set and chunks, its judgments, queries and gold, its
tokenizer and tokens) are stored once per content key for every run that uses them::

    LAKE/_shared/<table>/<content key>.parquet

(assay.store.lake.shared: the key of each table, e.g. the corpus hash for `documents`; which parts a run uses
follows from its `runs` row). Column names and types are the warehouse's (`hits` has the columns of the
warehouse's `hits` view: a lake keeps each hit whole, not the warehouse's compact hit tables), and each file keeps
its `run_id` column (a shared part: the run that wrote it), so a reader that ignores Hive partitioning still has
it. A lake written before ``_shared`` (and a compacted segment of such runs) holds each run's copy of its shared
rows in its partitions instead; readers read both and take each shared row once (see ``SHARED_KEYS``).

Compaction (`assay lake compact`, assay.store.lake.compact) adds a second place for the same rows, which readers of
this layout never see (its name starts with ``_``)::

    LAKE/_compacted/<DAY>-<STAMP>/<table>.parquet

one segment per UTC day of run ids, one file per table, every row of its runs as their partitions held it (with
its ``run_id`` column; ``_shared`` is never copied), ``runs.parquet`` written last as its commit. A run is read from its day's newest committed
segment when one holds it, else from its partitions (assay.store.lake.segments); ``assay lake prune`` removes whole
runs from either place, and the shared parts no remaining run uses after the grace period.

The lake is a local directory or an S3-compatible ``s3://bucket/prefix`` (assay.store.lake.location: the pyarrow
file system of either, the AWS variables and ``[lake]`` settings), with the same layout, objects for files.

Writers never lock. On an object store, which cannot rename, a run's objects are written under their final keys,
``runs`` last: the ``runs`` object is the commit, readers list only committed runs, and uncommitted objects are
deleted by their writer when it is stopped, or by a later writer after a grace period when it was killed
(assay.store.lake.writer). In a local directory a run's files are written under ``LAKE/.tmp-<owner>-<RUN_ID>/`` (the owner names the
writing process: assay.core.scratch) and each
``<table>/run_id=<RUN_ID>`` directory is renamed into place (``os.rename``, atomic on one file
system), ``runs`` last; the shared parts the lake lacks go first (linked into place from the staging, never
replacing one: assay.store.lake.shared). A run is visible when its ``runs`` partition is, and readers skip names
that start with ``_`` or ``.`` when they list tables. Any number of processes may write to one lake at once; a writer never rewrites
anything (compaction and pruning rewrite, and delete only after a grace period: assay.store.lake.compact). A writer stopped by SIGINT or SIGTERM, or that runs out of disk space, removes its staging and
the partitions it renamed; what a killed one left (its staging, and the partitions of its run when the
``runs`` partition never appeared) the next writer on that machine removes, never a live writer's.

Engines
-------
``open_lake(directory, engine="duckdb", **settings)`` returns a *lake reader*, the read interface of
``assay.store.warehouse.Warehouse``, so ``assay.present.report.build_report``, ``assay.verdicts.regression.history`` and
``regress``, ``assay.verdicts.gate.check`` and ``assay.verdicts.comparison.compare`` run on it unchanged. An engine is
a callable ``open_<engine>_lake(location: LakeLocation, **settings)`` named in ``ENGINES`` as
``"module:function"`` and imported only when asked for. What it returns must provide:

- ``path``: the lake directory (a ``pathlib.Path``), or for an object store its LakeLocation (``str``: the URL),
  named in messages.
- ``con.execute(sql, params=None)``: runs one SQL statement over the lake's tables and the views of
  ``sql/migrations`` (the measure and report SQL reads views such as ``judged_ranking``,
  ``eval_questions``, ``complete_runs``). ``params`` is a list bound to ``?`` placeholders, or a
  dict bound to ``$name`` placeholders (the form every file in ``sql/`` uses). Returns an object
  with ``description`` (a sequence whose items' ``[0]`` is a column name) and ``fetchall()``
  (a list of tuples of Python values: str, int, float, bool, None, datetime).
- ``query(name, **params) -> (columns, rows)``: the named file of ``sql/`` (``assay.core.sqlfiles.load_sql``)
  run with ``params`` bound as ``$name``.
- ``resolve_run_id(ref) -> str``: ``None``/``"latest"``, ``latest~N``, ``previous``, a full id or any unique part of
  one, among complete runs (``assay.store.run_refs``, through ``query``; a lake keeps no names, its ``run_names`` is
  empty); ``assay.core.errors.RunNotFound`` otherwise (same messages as the warehouse).
- ``close()``, and use as a context manager.
- ``engine``: its name (``"duckdb"``, ``"spark"``).

Settings reach the engine as keyword arguments; the CLI passes ``spark_master`` (``--spark-master``
or ``[lake] spark_master`` in assay.toml; ``None`` means the engine's default, ``local[*]`` for Spark)
only to engines other than DuckDB. An engine raises ``assay.core.errors.ConfigError`` naming what to install
when its library is missing.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from assay.core.errors import ConfigError, WarehouseError
from assay.store.lake.location import PARTITION_FILE, hidden  # noqa: F401  (part of this package's interface)

ENGINES = {
    "duckdb": "assay.store.lake.reader:open_duckdb_lake",
    "spark": "assay.store.lake.spark:open_spark_lake",
}

# Tables written per run: the run's own rows. Every one has a run_id column in the warehouse.
RUN_TABLES = ("runs", "run_queries", "hits", "run_stages", "stage_latency", "measure_values", "answers", "claims",
              "citations", "answer_raw", "answer_context", "model_requests", "claim_judgments")
# Shared tables, and the key that makes a row the same row in every file that holds it (a shared part, and the
# per-run copies of lakes written before shared parts): a reader keeps one row per key. All but interval_memo are
# stored once per content key (assay.store.lake.shared.PART_KEYS); interval_memo stays in the run's partitions.
SHARED_KEYS = {
    "corpora": ("corpus_hash",),
    "documents": ("corpus_hash", "doc_id"),
    "document_pages": ("corpus_hash", "doc_id", "page"),
    "chunk_sets": ("chunk_set",),
    "chunks": ("chunk_set", "chunk_id"),
    "judgment_sets": ("judgments_hash",),
    "queries": ("judgments_hash", "query_id"),
    "judgment_gold": ("judgments_hash", "query_id", "gold_idx"),
    "gold_spans": ("judgments_hash", "corpus_hash", "query_id", "gold_idx"),
    "tokenizers": ("tokenizer_id",),
    "doc_tokens": ("tokenizer_id", "corpus_hash", "doc_id", "tok_idx"),
    "chunk_tokens": ("tokenizer_id", "chunk_set", "chunk_id"),
    # the intervals the run's report shows, stored as it was scored (assay.measures.memo): history and report
    # over the lake read them instead of bootstrapping each run again
    "interval_memo": ("memo_key",),
}
LAKE_TABLES = RUN_TABLES + tuple(SHARED_KEYS)


def partition_dir(lake: Path, table: str, run_id: str) -> Path:
    return Path(lake) / table / f"run_id={run_id}"


def damaged_message(lake: Path, damaged: dict[str, tuple[str, str]]) -> str:
    """One line: the runs of ``lake`` that cannot be read, the first one's file and why, and what to do."""
    run_id, (file, why) = sorted(damaged.items())[0]
    more = f" (and {len(damaged) - 1} more run{'s' if len(damaged) > 2 else ''})" if len(damaged) > 1 else ""
    if "/_shared/" in str(file):  # a shared part (assay.store.lake.shared): every run on its corpus uses it
        aside = ("restore it, or delete it and write a run on the same corpus, chunks and judgments with `assay run "
                 f"--lake {lake}` (a missing part is written again)")
    elif "/_compacted/" in str(file):  # a compacted segment (assay.store.lake.segments): its runs go together
        segment = str(file).rsplit("/", 2)[-2]
        aside = f"restore it, or move the segment aside ({lake}/_compacted/{segment}: its runs go with it)"
    else:
        aside = f"move its partitions aside ({lake}/*/run_id={run_id}) or write the run again"
    return (f"lake {lake}: run {run_id}{more} cannot be read: {file} is not a readable Parquet file ({why}); "
            f"{aside}; `assay lake runs {lake}` lists the runs that can be read")


def open_lake(directory, engine: str = "duckdb", skip_damaged: bool = False, **settings):
    """A lake reader over ``directory`` with ``engine`` (see the module docstring for what it provides):
    a local directory, an ``s3://bucket/prefix`` URL, or an assay.store.lake.location.LakeLocation (which carries
    assay.toml's ``[lake]`` endpoint and region; the CLI passes one).

    A run with a file the engine cannot read as Parquet (its ``damaged``) is refused in one line naming the file;
    with ``skip_damaged`` the reader leaves such runs out and names them in ``damaged`` (`assay lake runs`)."""
    target = ENGINES.get(engine)
    if target is None:
        raise ConfigError(f"no lake engine {engine!r}; engines: {', '.join(sorted(ENGINES))}")
    from pyarrow import fs as pafs

    from assay.store.lake.location import lake_location, remote_error

    location = lake_location(directory)
    try:
        kind = location.fs.get_file_info(location.root).type
    except OSError as exc:
        raise remote_error(location, exc) from None
    if kind != pafs.FileType.Directory:
        what = "not a directory" if location.local else "no object under that prefix"
        raise ConfigError(f"no lake at {location}: {what}; `assay run --lake {location}` writes one")
    path = location.path
    module_name, function = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ConfigError(f"the {engine} lake engine is not available in this assay ({module_name} is "
                              "missing); use --engine duckdb") from None
        raise
    reader = getattr(module, function)(location, **settings)
    damaged = getattr(reader, "damaged", None)
    if damaged and not skip_damaged:
        reader.close()
        raise WarehouseError(damaged_message(path, damaged))
    return reader
