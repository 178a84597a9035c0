"""`assay sql`: one read-only query against the warehouse, sandboxed, printed as a table, CSV or JSON; and the
same sandbox for the SQL of a user's measures (``sandboxed_select``).

The warehouse opens read-only with DuckDB's own guards on: no file outside it is read or
written (COPY, EXPORT, read_text, glob, ATTACH), no extension is installed or loaded, and the
settings are locked so the query cannot turn any of that back on. The text must be exactly one
statement (DuckDB's parser says so, not a regex), and it runs under a time limit: a watcher
thread interrupts DuckDB, as the CLI's Ctrl-C handler does.
"""

from __future__ import annotations

import csv
import io
from assay.core import jsonout
import threading

from assay.core.errors import AssayError
from assay.store.warehouse import Warehouse

DEFAULT_TIMEOUT_S = 30.0
SANDBOX = {
    "enable_external_access": False,  # no file but the warehouse, no network, no extension installs
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,  # last: nothing in the query can SET the others back
}
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


def _execute(con, query: str, timeout_s: float):
    """(column names or None, rows). DuckDB runs in this (the main) thread, where the CLI's Ctrl-C handler
    interrupts it; a watcher thread interrupts it past the time limit or after Ctrl-C, again every 0.1 s,
    since an interrupt that lands before the query starts is lost."""
    import time

    import duckdb

    from assay.store.warehouse import JOURNAL, interruptible

    done, late = threading.Event(), threading.Event()
    deadline = time.monotonic() + timeout_s

    def watch():
        while not done.wait(0.1):
            if time.monotonic() >= deadline:
                late.set()
            if late.is_set() or JOURNAL.interrupted:
                con.interrupt()

    watcher = threading.Thread(target=watch, name="assay-sql-time-limit", daemon=True)
    watcher.start()
    try:
        with interruptible(con):
            cur = con.execute(query)
            cols = [d[0] for d in cur.description] if cur.description else None
            rows = cur.fetchall() if cur.description else []
    except duckdb.Error as exc:
        if late.is_set():
            raise AssayError(f"query stopped after {timeout_s:g} s, the time limit; narrow it, or give "
                             "--timeout SECONDS a larger value") from None
        raise _explain(exc) from None
    finally:
        done.set()
        watcher.join()
    return cols, rows


def _numeric(v) -> bool:
    from decimal import Decimal

    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _cell(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def run_sql(warehouse_path, query: str, fmt: str = "table", timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    with Warehouse.open(warehouse_path, read_only=True, config=SANDBOX) as wh:
        cols, rows = _execute(wh.con, one_statement(wh.con, query), timeout_s)
    if cols is None:
        return ""
    if fmt == "json":
        return jsonout.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    from assay.core.tables import render as grid

    # stored text is shown escaped, whatever it holds; numeric columns (by their values, not how
    # they read: a VARCHAR of digits stays left) are right-aligned
    align = ["right" if any(v is not None for v in col) and all(v is None or _numeric(v) for v in col) else "left"
             for col in zip(*rows)] if rows else None
    table = grid(cols, [[_cell(v) for v in r] for r in rows], align=align)
    return f"{table}\n({len(rows)} row{'s' if len(rows) != 1 else ''})\n"


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
