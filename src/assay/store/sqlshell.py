"""`assay sql`: one read-only query against the warehouse, sandboxed, printed as a table, CSV or JSON; and the
same sandbox for the SQL of a user's measures (``sandboxed_select``).

The warehouse opens read-only with DuckDB's own guards on: no file outside it is read or
written (COPY, EXPORT, read_text, glob, ATTACH), no extension is installed or loaded, and the
settings are locked so the query cannot turn any of that back on. The text must be exactly one
statement (DuckDB's parser says so, not a regex), and it runs under three bounds: a time limit counted from the
command's start to the last row formatted (a watcher thread interrupts DuckDB, as the CLI's Ctrl-C handler does,
and the rows are fetched in batches between which the clock is read), a memory limit (DuckDB's `memory_limit`,
with nothing spilled to disk beside the warehouse), and a number of rows printed (the first ``max_rows``, with a
note saying more were left out and how to ask for them).
"""

from __future__ import annotations

import csv
import io
import re
import threading

from assay.core import jsonout
from assay.core.errors import AssayError
from assay.inputs.settings import SQL_DEFAULTS
from assay.store.warehouse import Warehouse

DEFAULT_TIMEOUT_S = SQL_DEFAULTS["timeout_s"]
BATCH = 1000  # rows fetched between two looks at the clock
SANDBOX = {
    "enable_external_access": False,  # no file but the warehouse, no network, no extension installs
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "temp_directory": "",  # nothing spills beside the warehouse: the memory limit is a limit
    "lock_configuration": True,  # last: nothing in the query can SET the others back
}


def sandbox(memory_mb: int) -> dict:
    """SANDBOX with DuckDB's memory limit (its default is 80% of the machine's memory)."""
    settings = {k: v for k, v in SANDBOX.items() if k != "lock_configuration"}
    return {**settings, "memory_limit": f"{memory_mb}MB", "lock_configuration": True}


READS = ("SELECT", "EXPLAIN", "PRAGMA", "CALL")  # SELECT covers WITH, FROM, DESCRIBE, SHOW, SUMMARIZE
WHY_REFUSED = {
    "COPY": "it writes or reads files outside the warehouse (`assay export` writes runs as files)",
    "EXPORT": "it writes files outside the warehouse (`assay export` writes runs as files)",
    "ATTACH": "it opens another database file",
    "DETACH": "it detaches a database",
    "LOAD": "it installs or loads an extension",
    "SET": "it changes a setting, and the settings are locked",
    "MULTI": "it runs several statements",
}
# A PRAGMA that switches a setting on or off (enable_profiling, disable_optimizer, ...), not one that reads
_SWITCH = re.compile(r"^\s*PRAGMA\s+(enable|disable)_\w+\s*;?\s*$", re.IGNORECASE | re.MULTILINE)
_ALONE = "`assay sql` runs exactly one read-only statement (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN, PRAGMA, CALL)"


def one_statement(con, query: str) -> str:
    """The query's single statement, or an AssayError naming what it is and why it is refused."""
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise AssayError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise AssayError(f"refused: the text holds {len(statements)} statements; {_ALONE}")
    statement = statements[0]
    try:
        kind = statement.type.name
    except ValueError:  # a statement type the Python client has no name for
        kind = "UNKNOWN"
    if kind == "PRAGMA" and _SWITCH.search(getattr(statement, "query", query)):
        kind = "SET"  # DuckDB 1.x lets these through a locked configuration (2 does not): refused here, on both
    if kind not in READS:
        why = WHY_REFUSED.get(kind, "it would change the warehouse, which `assay sql` opens read-only")
        raise AssayError(f"refused {kind}: {why}; {_ALONE}")
    return query


def _explain(exc) -> AssayError:
    """A DuckDB failure as one line: what was refused and why, or what failed."""
    import duckdb

    from assay.store.warehouse import JOURNAL, damage_error

    first = str(exc).splitlines()[0]
    damaged = damage_error(exc, JOURNAL.last_path)
    if damaged is not None:
        return damaged
    if isinstance(exc, duckdb.PermissionException):
        return AssayError(f"refused: {first}; `assay sql` reads only the warehouse file: no other file, "
                          "no network, no extensions")
    if "configuration has been locked" in first:
        return AssayError(f"refused: {first}; settings are locked in `assay sql`")
    if "read-only" in first:
        return AssayError(f"refused: {first}; `assay sql` opens the warehouse read-only")
    return AssayError(f"SQL failed: {first}")


class _Clock:
    """The time limit of one `assay sql`, counted from its start: ``late`` once it has passed."""

    def __init__(self, timeout_s: float):
        import time

        self.timeout_s, self._time = timeout_s, time.monotonic
        self.deadline = time.monotonic() + timeout_s
        self.late = threading.Event()

    def passed(self) -> bool:
        if self._time() >= self.deadline:
            self.late.set()
        return self.late.is_set()

    def error(self) -> AssayError:
        return AssayError(f"query stopped after {self.timeout_s:g} s, the time limit; narrow it, or give "
                          "--timeout SECONDS a larger value")

    def check(self) -> None:
        if self.passed():
            raise self.error()


def _execute(con, query: str, clock: _Clock, max_rows: int, memory_mb: int):
    """(column names or None, rows, whether rows were left out): at most ``max_rows`` rows, fetched in batches.
    DuckDB runs in this (the main) thread, where the CLI's Ctrl-C handler interrupts it; a watcher thread
    interrupts it past the time limit or after Ctrl-C, again every 0.1 s, since an interrupt that lands before
    the query starts is lost; between batches this thread reads the clock itself."""
    import duckdb

    from assay.store.warehouse import JOURNAL, interruptible

    done = threading.Event()

    def watch():
        while not done.wait(0.1):
            if clock.passed() or JOURNAL.interrupted:
                con.interrupt()

    watcher = threading.Thread(target=watch, name="assay-sql-time-limit", daemon=True)
    watcher.start()
    try:
        with interruptible(con):
            cur = con.execute(query)
            if not cur.description:
                return None, [], False
            cols, rows = [d[0] for d in cur.description], []
            while len(rows) <= max_rows:
                clock.check()
                batch = cur.fetchmany(min(BATCH, max_rows + 1 - len(rows)))
                if not batch:
                    break
                rows.extend(batch)
            clock.check()
    except duckdb.Error as exc:
        if clock.late.is_set():
            raise clock.error() from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise AssayError(f"query stopped at the memory limit of {memory_mb} MB ({str(exc).splitlines()[0]}); "
                             "narrow it, or give --memory-mb MB a larger value") from None
        raise _explain(exc) from None
    finally:
        done.set()
        watcher.join()
    return cols, rows[:max_rows], len(rows) > max_rows


def _numeric(v) -> bool:
    from decimal import Decimal

    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _cell(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _csv_cell(v):
    """A value as printed CSV: text (and anything shown as text: a list, a struct, a date) escaped for the
    terminal with a formula prefix neutralised (escape.printed_csv_cell); numbers and NULL as they are."""
    if v is None or isinstance(v, bool) or _numeric(v):
        return v
    from assay.core.escape import printed_csv_cell

    return printed_csv_cell(str(v))


def _more(max_rows: int) -> str:
    return (f"note: printed the first {max_rows} rows; the query gives more: narrow it (WHERE, LIMIT), or give "
            "--max-rows N to print more (`assay export` writes whole runs to files)")


def run_sql(warehouse_path, query: str, fmt: str = "table", timeout_s: float = DEFAULT_TIMEOUT_S,
            max_rows: int = SQL_DEFAULTS["max_rows"], memory_mb: int = SQL_DEFAULTS["memory_mb"]) -> str:
    """The query's result as text in ``fmt``, within ``timeout_s`` from now to the last row formatted, DuckDB within
    ``memory_mb`` MB, at most ``max_rows`` rows (a note on stderr says when more were left out)."""
    clock = _Clock(timeout_s)
    with Warehouse.open(warehouse_path, read_only=True, config=sandbox(memory_mb), old_schema="read") as wh:
        cols, rows, more = _execute(wh.con, one_statement(wh.con, query), clock, max_rows, memory_mb)
    if cols is None:
        return ""
    text = _format(cols, rows, fmt, clock, more)
    clock.check()
    if more:
        from assay.core import progress

        progress.say(_more(max_rows))
    return text


def _format(cols, rows, fmt: str, clock: _Clock, more: bool) -> str:
    if fmt == "json":
        return jsonout.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([_csv_cell(c) for c in cols])
        for start in range(0, len(rows), BATCH):
            clock.check()
            w.writerows([_csv_cell(v) for v in r] for r in rows[start:start + BATCH])
        return buf.getvalue()
    from assay.core.tables import render as grid

    # stored text is shown escaped, whatever it holds; numeric columns (by their values, not how
    # they read: a VARCHAR of digits stays left) are right-aligned
    align = ["right" if any(v is not None for v in col) and all(v is None or _numeric(v) for v in col) else "left"
             for col in zip(*rows)] if rows else None
    cells = []
    for start in range(0, len(rows), BATCH):
        clock.check()
        cells += [[_cell(v) for v in r] for r in rows[start:start + BATCH]]
    table = grid(cols, cells, align=align)
    count = f"first {len(rows)} rows" if more else f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    return f"{table}\n({count})\n"


# --- a user's measure SQL ----------------------------------------------------------------------------------------

def _relations_read(con, query: str) -> set[str]:
    """The names of the tables and views ``query`` reads, by DuckDB's own parser (CTE names among them)."""
    import json

    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0])
    if tree.get("error"):
        raise AssayError(f"SQL does not parse: {tree.get('error_message', 'unknown error')}")
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str):
                names.add(node["table_name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree)
    return names


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sandboxed_select(con, query: str, params: dict, fetch=None):
    """The rows of ``query``, one SELECT, run as `assay sql` runs a query: in a DuckDB of its own with external
    access, extension installs and loads off and its settings locked, so it reads no file, fetches no URL and
    writes nothing anywhere. That database holds a copy of each table or view of ``con`` the query names (the
    rows of the run ``params["run_id"]`` where the relation has a run_id column), copied through Arrow with
    their types, so the values are those the query gives on ``con``. ``fetch`` reads the result (default: its
    rows, ``fetchall``). An AssayError says, in one line, what was refused or what failed."""
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise AssayError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    kinds = [getattr(getattr(st, "type", None), "name", "UNKNOWN") for st in statements]
    if kinds != ["SELECT"]:
        what = f"{len(kinds)} statements" if len(kinds) != 1 else f"a {kinds[0]} statement"
        raise AssayError(f"refused: the SQL holds {what}; a measure is exactly one SELECT (WITH ... SELECT)")
    known = {name.lower(): name for (name,) in con.execute(  # names are case-insensitive, as DuckDB reads them
        "SELECT DISTINCT table_name FROM information_schema.tables").fetchall()}
    named = {known[n.lower()] for n in _relations_read(con, query) if n.lower() in known}
    sandbox = duckdb.connect(":memory:", config={k: v for k, v in SANDBOX.items() if k != "lock_configuration"})
    try:
        for name in sorted(named):
            columns = [d[0] for d in con.execute(f"SELECT * FROM {_quoted(name)} LIMIT 0").description]
            if "run_id" in columns and "run_id" in params:
                rows = con.sql(f"SELECT * FROM {_quoted(name)} WHERE run_id = $run_id",
                               params={"run_id": params["run_id"]})
            else:
                rows = con.sql(f"SELECT * FROM {_quoted(name)}")
            sandbox.register("_assay_copy", rows.to_arrow_table())
            sandbox.execute(f"CREATE TABLE {_quoted(name)} AS SELECT * FROM _assay_copy")
            sandbox.unregister("_assay_copy")
        sandbox.execute("SET lock_configuration = true")
        try:
            result = sandbox.execute(query, params)
            return result.fetchall() if fetch is None else fetch(result)
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0]
            if isinstance(exc, duckdb.PermissionException):
                raise AssayError(f"refused: {first}; a measure reads only the warehouse: no other file, no "
                                 "network, no extensions") from None
            raise AssayError(f"SQL failed: {first}") from None
    finally:
        sandbox.close()
