"""TREC run files scored against TREC qrels by the warehouse's own measure SQL, as trec_eval scores them.

Where its C code is built (_trec_read.c; hatch_build.py), it reads both files, on every core, and
ranks the run, giving the columns of the measure tables (assay.measures.trec_tables.from_read). Otherwise, or
when that code gives up on a file (anything it does not read exactly as the reference reading below
does, a malformed line or a duplicate among them, or a run whose lines of one query are not all
together), DuckDB reads both files into Arrow columns; the run is ranked with numpy
(assay.measures.trec_ranking) and the tables the measure files read (``eval_questions``, ``judged_ranking``, ``unit_counts``,
``ideal_gains``, ``levels``) are built from arrays (assay.measures.trec_tables) for one pseudo-run: run
``trec``, stage ``final``, level ``doc``, in an in-memory DuckDB database. Every measure is then
the unchanged ``sql/measures/*.sql`` file of the registry, so a TREC run and a stored run are
scored by one definition. Per query, the values agree with pytrec_eval (trec_eval 9) to 1e-9.

trec_eval's rules, kept here:

- Ranking: by score descending, ties broken by document id descending (byte order). The rank
  column of the run file is ignored, as are its Q0 and tag columns.
- Relevance: a document is relevant at relevance >= 1; grades <= 0 are judged non-relevant.
  nDCG's gain is the relevance (linear), so negative grades gain nothing.
- Queries: those of the qrels that the run answers, including a qrels query with no relevant
  document (every measure scores it 0, as trec_eval does). A run query absent from the qrels is
  not scored. A qrels query absent from the run is skipped unless ``complete`` (trec_eval -c),
  which scores it 0 on every measure. The "all" row is the mean over the queries scored.
- A document listed twice for one query, in the run or in the qrels, is refused (trec_eval
  stops with "duplicate docs"; pytrec_eval's own parsers refuse it too).

Files: columns are separated by any run of spaces and tabs (leading and trailing blanks are
ignored, blank lines skipped, CRLF line ends read). A run line is ``query_id Q0 doc_id rank score
tag`` with a score that is a number (not NaN; +-inf sorts as trec_eval sorts it); a qrels line is
``query_id iteration doc_id relevance`` with a whole-number relevance. A line that breaks this
raises ``FormatError`` naming the file and line.

Reading: a file whose separators are all single spaces (or all single tabs) is parsed by DuckDB's
CSV reader, typed and in parallel, with the 64-bit hash of (query, document) computed on the way:
the fast path (``run_fast.sql``, ``qrels_fast.sql``; about 3 s of CPU for ten million run lines).
The reader cannot collapse runs of blanks, and splitting lines with a regular expression is about
seven times slower, so any other file is read whole lines at a time and split with list functions
(``trec_fields`` in ``sql/trec/macros.sql``, the reference reading). The fast path gives up, to the
reference reading, on any line it cannot take exactly. Nothing of the run is stored in DuckDB:
after the ranking only the relevant documents it retrieves are kept, with their ranks.
"""

from __future__ import annotations

import csv
import io
from assay.core import jsonout
import os
import weakref
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa

from assay.measures import trec_ranking, trec_tables
from assay.core.errors import AssayError, ConfigError, FormatError
from assay.inputs.formats import numbered_lines
from assay.inputs.formats.trec import QRELS_COLUMNS, RUN_COLUMNS
from assay.measures.registry import FAMILIES, TREC_STANDARD, Measure, Scope, parse_measure
from assay.core.sqlfiles import load_sql
from assay.measures.trec_ranking import Rows

# The pseudo-run of sql/trec/measure_views.sql.
RUN_ID, STAGE, LEVEL = "trec", "final", "doc"
SCOPE = Scope("a TREC run", (LEVEL,), "it needs what only an assay run stores")
FORMATS = ("table", "json", "csv")
ROW_FIELDS = ("metric", "query_id", "value", "n")
ALL = "all"
# Malformed lines fetched from SQL; the first of them in the file is the one reported.
_PROBLEM_LINES = 1000
# The query id of each query code and the code of each id, per connection (trec_query_codes).
_QUERY_IDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The Arrow tables registered on a connection (a cursor of it registers them again).
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The last list of scored queries a connection's measures were asked about, with their ids and codes.
_SCORED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Bytes read at a time when searching a file for a separator (small enough to stay in the CPU cache).
_SCAN_BLOCK = 1 << 20


def trec_families() -> list[str]:
    """The measure families that apply to a TREC run: those with a document level."""
    return [name for name, family in FAMILIES.items() if LEVEL in family.levels]


def parse_trec_measures(names: list[str] | None = None) -> list[Measure]:
    """Measures by name (``nDCG@10``, ``AP``, or an alias: ``ndcg_cut_10``, ``map``), each once, in the order
    given; None: the standard set (``TREC_STANDARD``)."""
    measures: dict[str, Measure] = {}
    for text in TREC_STANDARD if names is None else names:
        measure = parse_measure(text, SCOPE)
        measures.setdefault(measure.name, measure)
    if not measures:
        raise ConfigError(f"no measure given; choose from {', '.join(trec_families())} (e.g. -m nDCG@10 -m AP)")
    return list(measures.values())


def open_trec(qrels_path, run_path, *, complete: bool = False):
    """An in-memory DuckDB connection holding both files and the tables the measure SQL reads."""
    qrels_path, run_path = Path(qrels_path), Path(run_path)
    read = _compiled_read(qrels_path, run_path)
    if read is not None:
        return _connect(*trec_tables.from_read(read, complete), ids=read["query_ids"])
    return _open(lambda con: (_load(con, qrels_path, "qrels"), _load(con, run_path, "run")), complete)


_COMPILED: list = []


def compiled_reader():
    """_trec_read.c's ``read``, or None when it is not built, or was built from another version of its
    source (hatch_build.py builds it; `make install` again after editing it)."""
    if not _COMPILED:
        import hashlib

        try:
            from assay.measures import _trec_read
        except ImportError:
            _COMPILED.append(None)
        else:
            source = Path(__file__).with_name("_trec_read.c")
            current = not source.exists() or hashlib.sha256(source.read_bytes()).hexdigest() == _trec_read.SOURCE_SHA256
            _COMPILED.append(_trec_read.read if current else None)
    return _COMPILED[0]


def _compiled_read(qrels_path: Path, run_path: Path) -> dict | None:
    """Both files read and the run ranked by _trec_read.c, on every core this process may use; None when
    it is not built or gives up on a file (a malformed line, a duplicate: the reference reading then
    decides and names the line; a run whose query's lines are not together: DuckDB's reading takes it)."""
    read = compiled_reader()
    if read is None:
        return None
    from assay.measures import _trec_read
    from assay.core import progress

    def size(path: Path) -> int | None:
        try:
            return os.stat(path).st_size or None
        except OSError:
            return None

    with progress.task(f"reading {qrels_path.name}", total=size(qrels_path), unit="bytes") as qrels_task, \
            progress.task(f"reading {run_path.name}", total=size(run_path), unit="bytes") as run_task, \
            qrels_task.polling(lambda: _trec_read.progress()[0]), run_task.polling(lambda: _trec_read.progress()[1]):
        answer = read(os.fspath(qrels_path), os.fspath(run_path), len(os.sched_getaffinity(0)))
        if not isinstance(answer, str):
            qrels_task.update(completed=_trec_read.progress()[0])
            run_task.update(completed=_trec_read.progress()[1])
    return None if isinstance(answer, str) else answer


def open_trec_tables(qrels, run, *, complete: bool = False, answered=()):
    """Like ``open_trec``, from Arrow tables already in memory: ``qrels`` (query_id, docno, grade) and
    ``run`` (query_id, docno, score), all strings but grade (integer) and score (double). ``answered``:
    ids of queries the run answers with an empty ranking (nested dicts can say so, a table or a file
    cannot): those in the qrels are scored, as pytrec_eval scores them (0 on every measure)."""

    def load(con) -> tuple[Rows, Rows]:
        con.register("_assay_qrels", qrels)
        con.register("_assay_run", run)
        loaded = []
        for what, value, dtype in (("qrels", "grade", np.int32), ("run", "score", np.float64)):
            rows = Rows.from_arrow(con.sql(load_sql(f"trec/{what}_tables")).to_arrow_table(), value, dtype)
            duplicate = trec_ranking.duplicate(rows)
            if duplicate:
                raise FormatError(what, None, f"document {duplicate[1]!r} is listed twice for query "
                                              f"{duplicate[0]!r}; each (query, document) pair may appear once")
            loaded.append(rows)
        return tuple(loaded)

    return _open(load, complete, answered)


def _open(load, complete: bool, answered=()):
    """A connection with the measure tables (sql/trec/measure_views.sql) of the files or tables `load`
    reads: the qrels and the run as Rows. The run is ranked here (assay.measures.trec_ranking) and dropped.
    ``answered``: see open_trec_tables."""
    import duckdb

    con = duckdb.connect(":memory:", config={"preserve_insertion_order": False})
    try:
        con.execute(load_sql("trec/macros"))
        with trec_ranking.small_pages():
            qrels, run = load(con)
            names = trec_tables.query_ids(qrels)
            relevant = trec_tables.relevant(qrels, trec_tables.query_codes(qrels.query_id, names))
            query = trec_tables.query_codes(run.query_id, names)
            rows, found = trec_ranking.retrieved_relevant(run, query, relevant)
            ranks, lines = trec_ranking.ranks(query, run.value, run.docno, rows, len(names))
            # trec_eval scores the qrels' queries the run answers; with -c (complete) every one
            questions = np.arange(len(names)) if complete else np.flatnonzero(lines)
            if answered and not complete:
                import pyarrow.compute as pc

                empty = trec_ranking.codes(pc.index_in(pa.array(list(answered), names.type), value_set=names))
                questions = np.union1d(questions, empty[empty >= 0].astype(questions.dtype))
            tables = trec_tables.tables(names, relevant.query, qrels.value[relevant.rows], relevant.docno, found,
                                        ranks, questions)
            del qrels, run, relevant, query, rows
    except BaseException:
        con.close()
        raise
    return _connect(names, tables, con)


def _connect(names: pa.Array, tables: dict, con=None, ids: list[str] | None = None):
    """`con` (or a new in-memory connection) with `tables` registered and the measure views over them;
    ``ids``: names as a list, when at hand."""
    import duckdb

    if con is None:
        con = duckdb.connect(":memory:", config={"preserve_insertion_order": False})
    try:
        for name, table in tables.items():
            con.register(name, table)  # for the connection's life: measure_views.sql makes views over them
        con.execute(load_sql("trec/measure_views"))
        _TABLES[con] = tables
        ids = names.to_pylist() if ids is None else ids
        _QUERY_IDS[con] = ids, {q: code for code, q in enumerate(ids)}
    except BaseException:
        con.close()
        raise
    return con


def scored_queries(con) -> list[tuple[str, int]]:
    """(query_id, number of relevant documents) of every query scored, by query id."""
    return con.execute(load_sql("trec/scored_queries")).fetchall()


def measure_values(con, measure: Measure, queries: list[tuple[str, int]] | None = None) -> dict[str, float]:
    """{query_id: value} of one measure for every query scored (``queries``: scored_queries(con))."""
    names, values = _values(con, measure, _fetch(con, measure), queries)
    return dict(zip(names, values))


def _fetch(con, measure: Measure) -> dict:
    """The measure SQL's answer, as numpy columns; a user's measure's sandboxed (assay.measures.compute.sandboxed)."""
    if measure.family.user:
        from assay.measures.compute import sandboxed

        return sandboxed(con, measure, measure.params(RUN_ID, STAGE), fetch=lambda result: result.fetchnumpy())
    return con.execute(load_sql(measure.sql), measure.params(RUN_ID, STAGE)).fetchnumpy()


@contextmanager
def _fetching(con, measures: list[Measure]):
    """The measures' _fetch answers, in order, as an iterator: computed several at a time on the cores
    this process may use, each on a cursor of its own (a new connection to the same database, the measure
    tables registered on it too), one DuckDB thread each (the queries are the parallelism; less CPU),
    while the caller turns the answers already in into rows."""
    from concurrent.futures import ThreadPoolExecutor

    workers = min(len(measures), len(os.sched_getaffinity(0)))
    tables = _TABLES.get(con)
    if workers < 2 or tables is None:
        yield (_fetch(con, measure) for measure in measures)
        return

    def fetch(measure: Measure) -> dict:
        cursor = con.cursor()
        try:
            for name, table in tables.items():
                cursor.register(name, table)
            return _fetch(cursor, measure)
        finally:
            cursor.close()

    con.execute("SET threads = 1")
    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(fetch, measure) for measure in measures]
        yield (future.result() for future in futures)
    finally:
        pool.shutdown(cancel_futures=True)


def _values(con, measure: Measure, result: dict, queries: list[tuple[str, int]] | None) -> tuple[list[str], list]:
    """The ids of the queries scored, in order, and the measure's value of each, from its SQL's answer."""
    ids, code_of = _query_ids(con)
    value, found = np.zeros(len(ids)), np.zeros(len(ids), dtype=bool)
    doc = result["level"] == LEVEL
    value[result["query_id"][doc]] = result["value"][doc]
    found[result["query_id"][doc]] = True
    queries = scored_queries(con) if queries is None else queries
    names, codes = _codes(con, queries)
    # The measure SQL scores only questions with a gold unit; trec_eval gives a query without a
    # relevant document 0 on every measure (value stays 0 there).
    for i in np.flatnonzero(~found[codes]):
        qid, n_relevant = queries[i]
        if n_relevant:
            raise AssayError(f"measure {measure.name} gave no value for query {qid!r}, which has "
                             f"{n_relevant} relevant document(s); this is a bug in {measure.family.sql}.sql")
    return names, value[codes].tolist()


def _codes(con, queries: list[tuple[str, int]]) -> tuple[list[str], np.ndarray]:
    """The ids and codes of `queries`, kept for the next measure asking about the same list."""
    kept = _SCORED.get(con)
    if kept is None or kept[0] is not queries:
        code_of = _query_ids(con)[1]
        kept = queries, [qid for qid, _ in queries], np.array([code_of[qid] for qid, _ in queries], dtype=np.int64)
        _SCORED[con] = kept
    return kept[1], kept[2]


def _query_ids(con) -> tuple[list[str], dict[str, int]]:
    """The query id of each code (sql/trec/measure_views.sql's trec_query_codes) and the code of each id,
    read once per connection."""
    if con not in _QUERY_IDS:
        ids = [q for (q,) in con.execute("SELECT query_id FROM trec_query_codes ORDER BY qcode").fetchall()]
        _QUERY_IDS[con] = ids, {q: code for code, q in enumerate(ids)}
    return _QUERY_IDS[con]


def evaluate_trec(qrels_path, run_path, measures: list[str] | None = None, per_query: bool = True,
                  complete: bool = False) -> list[dict]:
    """Score a TREC run against TREC qrels, as trec_eval does (see the module docstring); ``measures`` None:
    the standard set (``TREC_STANDARD``: trec_eval's defaults that assay computes, nDCG@10, Success@k).

    Returns rows ``{"metric", "query_id", "value", "n"}``: for each measure in the order given,
    one row per query scored (sorted by query id, ``n`` 1) when ``per_query``, then the
    ``"all"`` row, the mean over the ``n`` queries scored (``value`` None when there are none).
    """
    wanted = parse_trec_measures(measures)
    con = open_trec(qrels_path, run_path, complete=complete)
    try:
        rows = []
        with _fetching(con, wanted) as results:
            queries = scored_queries(con)
            for measure, result in zip(wanted, results):
                names, values = _values(con, measure, result, queries)
                name = measure.name
                if per_query:
                    rows += [{"metric": name, "query_id": qid, "value": v, "n": 1} for qid, v in zip(names, values)]
                mean = sum(values) / len(values) if values else None
                rows.append({"metric": name, "query_id": ALL, "value": mean, "n": len(values)})
        return rows
    finally:
        con.close()


def render(rows: list[dict], fmt: str) -> str:
    """The rows as ``table`` (trec_eval-like columns, 4 decimals), ``json`` (a list of row objects)
    or ``csv`` (full precision; an empty value is None)."""
    if fmt == "json":
        return jsonout.dumps(rows, indent=2) + "\n"
    from assay.core.escape import printed_csv_cell

    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: printed_csv_cell(row.get(key)) for key in ROW_FIELDS} for row in rows)
        return buf.getvalue()
    if fmt == "table":  # query ids come from the user's files: the renderer escapes them
        from assay.core.tables import render as grid

        body = [[row["metric"], row["query_id"], "-" if row["value"] is None else f"{row['value']:.4f}", row["n"]]
                for row in rows]
        return grid(ROW_FIELDS, body, align=["left", "left", "right", "right"]) + "\n"
    raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


# -- loading -------------------------------------------------------------------------------
_KINDS = {"run": (6, RUN_COLUMNS), "qrels": (4, QRELS_COLUMNS)}


def _load(con, path: Path, kind: str) -> Rows:
    """A qrels (grades) or run (scores) file as rows, refused when a (query, document) pair repeats."""
    value, dtype = ("grade", np.int32) if kind == "qrels" else ("score", np.float64)
    rows = Rows.from_arrow(_read(con, path, kind), value, dtype)
    duplicate = trec_ranking.duplicate(rows)
    if duplicate:
        _raise_duplicate(path, kind, *duplicate)
    return rows


def _read(con, path: Path, kind: str):
    """A TREC file as an Arrow table (h, query_id, docno, and grade or score): by the fast path when
    the file has one separator and it takes every line, else by the reference reading."""
    import duckdb

    with _reading(con, path):
        separator = _single_separator(path)
        if separator is not None:
            try:
                return con.sql(load_sql(f"trec/{kind}_fast"), params={"path": str(path), "delim": separator}
                               ).to_arrow_table()
            except (duckdb.InvalidInputException, duckdb.ConversionException):
                pass  # a line the fast path cannot take exactly: the reference reading decides, and names it
        _load_lines(con, path, kind)
        return con.sql(load_sql(f"trec/{kind}_rows")).to_arrow_table()


@contextmanager
def _reading(con, path: Path):
    """A progress bar over the file's bytes while DuckDB reads it: DuckDB reports how far a statement
    has got when asked, so a thread asks (only while a bar is drawn)."""
    from assay.core import progress

    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    with progress.task(f"reading {path.name}", total=size or None, unit="bytes") as task:
        if not task.drawn or not size:
            yield
            return
        con.execute("SET enable_progress_bar = true")
        con.execute("SET enable_progress_bar_print = false")  # DuckDB's own bar would go to stdout

        def done():
            percent = con.query_progress()
            return size * percent / 100 if percent >= 0 else None

        with task.polling(done):
            yield


def _single_separator(path: Path) -> str | None:
    """' ' when the file holds no tab, '\\t' when it holds tabs but no space, else None (also when empty).

    The file is searched in blocks read into one reused buffer, which stays in the CPU cache:
    several times faster than searching a memory map of the whole file (its page faults dominate)."""
    try:
        if os.stat(path).st_size == 0:
            return None
        if not _holds(path, b"\t"):
            return " "
        if not _holds(path, b" "):
            return "\t"
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror or exc}") from exc
    return None


def _holds(path: Path, byte: bytes) -> bool:
    """Whether the file holds this byte anywhere."""
    buffer = bytearray(_SCAN_BLOCK)
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            if buffer.find(byte, 0, n) >= 0:
                return True
    return False


def _load_lines(con, path: Path, kind: str) -> None:
    import duckdb

    if not path.is_file():
        raise FormatError(path, None, f"cannot read: no such file; expected a TREC {kind} file")
    try:
        con.execute(load_sql(f"trec/{kind}_lines"), {"path": str(path)})
    except duckdb.IOException as exc:
        raise FormatError(path, None, f"cannot read: {str(exc).strip().splitlines()[0]}") from exc
    except duckdb.InvalidInputException as exc:
        _raise_unreadable(path, exc)
    problems = con.execute(load_sql(f"trec/{kind}_problems"), {"limit": _PROBLEM_LINES}).fetchall()
    if problems:
        _raise_problem(path, kind, problems)


def _fields(line: str) -> list[str]:
    """A line's columns, split as trec_fields (sql/trec/macros.sql) splits them."""
    return [f for f in line.replace("\t", " ").split(" ") if f]


def _raise_problem(path: Path, kind: str, problems: list[tuple[list[str], str, int]]) -> None:
    """The first malformed line in the file among those SQL found, named by its number."""
    width, columns = _KINDS[kind]
    by_fields = {tuple(fields): problem for fields, problem, _ in problems}
    lineno, fields, line = None, problems[0][0], " ".join(problems[0][0])
    for number, text in numbered_lines(path):
        if tuple(_fields(text)) in by_fields:
            lineno, fields, line = number, _fields(text), text
            break
    problem = by_fields[tuple(fields)]
    if problem == "columns":
        message = f"expected {width} columns {columns!r} separated by spaces or tabs, found {len(fields)}: {line!r}"
    elif problem == "score":
        message = f"score {fields[4]!r} is not a number; expected {width} columns {columns!r}"
    else:
        message = f"relevance {fields[3]!r} is not a whole number; expected {width} columns {columns!r}"
    n_bad = problems[0][2]
    if n_bad > 1:
        message += f" ({n_bad} malformed lines in all)"
    raise FormatError(path, lineno, message)


def _raise_duplicate(path: Path, kind: str, query_id: str, docno: str) -> None:
    lines = [n for n, text in numbered_lines(path) if (f := _fields(text)) and f[0] == query_id and f[2] == docno]
    first, again = (lines + [None, None])[:2]
    raise FormatError(path, again, f"document {docno!r} appears again for query {query_id!r}"
                                   + (f" (first on line {first})" if first else "")
                                   + f"; trec_eval refuses a {kind} file with duplicates: keep one line per "
                                   "query and document")


def _raise_unreadable(path: Path, exc: Exception) -> None:
    for _ in numbered_lines(path):  # raises FormatError at the first line that is not UTF-8
        pass
    reason = str(exc).strip().splitlines()[0]
    raise FormatError(path, None, f"cannot be read as a text file ({reason})")
