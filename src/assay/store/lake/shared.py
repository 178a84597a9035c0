"""One copy of each corpus: the shared rows of a lake stored once per content key, not once per run.

Layout::

    LAKE/_shared/<table>/<content key>.parquet

A *shared part* holds every row of one shared table (``SHARED_KEYS`` but ``interval_memo``) for one content key,
the values that make the rows the same in every run that has them (``PART_KEYS``): the corpus hash for
``corpora``, ``documents`` and ``document_pages``; the chunk set for ``chunk_sets`` and ``chunks``; the judgments
hash for ``judgment_sets``, ``queries`` and ``judgment_gold`` (with the corpus hash for ``gold_spans``); the
tokenizer for ``tokenizers``; tokenizer and chunk set for ``chunk_tokens``; tokenizer and corpus hash for
``doc_tokens``. The file name is those values, each percent-quoted, joined by ``+``. Rows are ordered by the
table's key, and each keeps a ``run_id`` column: the run that wrote the part (a reader keeps the first run's copy
of a shared row, as it always did).

``doc_tokens`` holds the whole corpus's pieces once per tokenizer and corpus (a run computes them all anyway,
assay.store.tokens.write_tokens), no longer only the documents the run's hits touch: the only reader of the table
(``sql/measures/span_context.sql``) joins it to a run's hits, so the extra rows change no result, and one copy of
the whole corpus costs less than a subset per run after a few runs (docs/warehouse-and-lake.md has the figures).
``interval_memo`` stays per run: its keys are the run's own values.

Which parts a run uses follows from its ``runs`` row (``corpus_hash``, ``chunk_set``, ``judgments_hash``,
``tokenizer_id``; ``REF_COLUMNS``): readers read the parts that the visible runs' rows name and that exist, beside
the per-run copies of runs written before this layout (and the copies compacted segments of such runs hold), and
keep one row per key as before.

A part present is never written again. A local writer writes a missing part into its own staging directory
(``LAKE/.tmp-<owner>-<run>/``, removed with it when the writer is stopped or, killed, by the next writer) and links it
into place (``os.link``: atomic, and it never replaces a part another writer linked first); an object store gets
one PUT under the final key (an object appears whole or not at all; two writers of one key write the same rows).
Parts are written before the run's partitions, and checked again just before its ``runs`` commit (a part removed
meanwhile is written again), so a visible run finds its parts. A writer that fails leaves the parts it wrote: other
runs may use them, and a part no run uses is removed by ``assay lake prune``
(assay.store.lake.compact.collect_unused).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from assay.store.lake import SHARED_KEYS

SHARED = "_shared"
# the content key of each shared table's parts: what makes its rows the same in every run that has them
PART_KEYS = {
    "corpora": ("corpus_hash",),
    "documents": ("corpus_hash",),
    "document_pages": ("corpus_hash",),
    "chunk_sets": ("chunk_set",),
    "chunks": ("chunk_set",),
    "judgment_sets": ("judgments_hash",),
    "queries": ("judgments_hash",),
    "judgment_gold": ("judgments_hash",),
    "gold_spans": ("judgments_hash", "corpus_hash"),
    "tokenizers": ("tokenizer_id",),
    "doc_tokens": ("tokenizer_id", "corpus_hash"),
    "chunk_tokens": ("tokenizer_id", "chunk_set"),
}
REF_COLUMNS = ("corpus_hash", "chunk_set", "judgments_hash", "tokenizer_id")  # of `runs`: what names its parts


def part_name(values) -> str:
    return "+".join(quote(str(v), safe="") for v in values) + ".parquet"


def run_parts(table: str, row: dict) -> str | None:
    """The name of ``table``'s part a run with ``runs`` row ``row`` ({column: value}) uses; None when a value is
    missing (a run without a tokenizer)."""
    values = [row.get(column) for column in PART_KEYS[table]]
    return None if any(v is None for v in values) else part_name(values)


def present(location, key: str) -> bool:
    from pyarrow import fs as pafs

    from assay.store.lake.location import remote_error

    try:
        return location.fs.get_file_info(key).type == pafs.FileType.File
    except OSError as exc:
        raise remote_error(location, exc) from None


def _groups(con, table: str):
    """The content keys of ``table``'s rows in the in-memory warehouse ``con``."""
    keys = PART_KEYS[table]
    return [tuple(r) for r in con.execute(f"SELECT DISTINCT {', '.join(keys)} FROM {table} "
                                          f"ORDER BY {', '.join(keys)}").fetchall()]


def _rows(con, table: str, values, run_id: str):
    keys = PART_KEYS[table]
    where = " AND ".join(f"{k} = ?" for k in keys)
    order = ", ".join(SHARED_KEYS[table])  # one order, so every writer of a key writes the same rows alike
    return con.sql(f"SELECT CAST(? AS VARCHAR) AS run_id, * FROM {table} WHERE {where} ORDER BY {order}",
                   params=[run_id, *values]).to_arrow_table()


def ensure_parts(location, con, tables, run_id: str, staging: Path | None = None) -> list[str]:
    """Write every part of ``tables`` (those of ``PART_KEYS``) that the run's rows in ``con`` have and the lake lacks;
    returns the parts written (their paths in the lake's file system). ``staging``: a local writer's staging
    directory, where a part is written before it is linked into place."""
    import pyarrow.parquet as pq

    written = []
    for table in tables:
        if table not in PART_KEYS:
            continue
        for values in _groups(con, table):
            if any(v is None for v in values):
                continue  # no content key: such rows never reach a run (no run row names them)
            key = location.key(SHARED, table, part_name(values))
            if present(location, key):
                continue
            data = _rows(con, table, values, run_id)
            if not location.local:
                pq.write_table(data, key, filesystem=location.fs)
                written.append(key)
                continue
            temp = Path(staging) / SHARED / table / part_name(values)
            temp.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(data, temp)
            with open(temp, "rb") as f:  # the bytes are on disk before the link makes them visible
                os.fsync(f.fileno())
            final = Path(key)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(temp, final)  # atomic, and never over a part another writer linked first
                written.append(key)
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links: rename (atomic too; the same rows either way)
                os.rename(temp, final)
                written.append(key)
            temp.unlink(missing_ok=True)
    return written


def run_refs(con, run_ids=None, source: str = "runs", params=None) -> list[dict]:
    """The ``runs`` rows' columns that name parts, one dict per run (``run_id`` and ``REF_COLUMNS``), read through
    ``con`` from ``source`` (the lake's ``runs`` view, or a ``read_parquet`` of its files)."""
    sql = f"SELECT run_id, {', '.join(REF_COLUMNS)} FROM {source}"
    columns = ("run_id",) + REF_COLUMNS
    rows = [dict(zip(columns, r)) for r in con.execute(sql, params).fetchall()]
    wanted = None if run_ids is None else set(run_ids)
    return [r for r in rows if wanted is None or r["run_id"] in wanted]


def used_parts(location, refs) -> dict[str, dict[str, list[str]]]:
    """{table: {part file as an engine opens it: the run ids using it}} for the parts the runs of ``refs``
    (``run_refs``) name and the lake holds. Runs written before this layout name parts that may not exist: their
    rows are in their own partitions."""
    there: dict[str, set[str]] = {}
    base = location.key(SHARED)
    for info in location.files(SHARED):  # one listing (one paginated LIST on a store)
        parts = info.path[len(base):].strip("/").split("/")
        if len(parts) == 2 and not parts[1].startswith("."):
            there.setdefault(parts[0], set()).add(parts[1])
    found: dict[str, dict[str, list[str]]] = {}
    for table in PART_KEYS:
        for ref in refs:
            name = run_parts(table, ref)
            if name is not None and name in there.get(table, ()):
                found.setdefault(table, {}).setdefault(location.uri(SHARED, table, name), []).append(ref["run_id"])
    return found
