"""`assay sql`: one read-only query against the warehouse, sandboxed, printed as a table, CSV or JSON.

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


def _csv_cell(v):
    """A value as printed CSV: text (and anything shown as text: a list, a struct, a date) escaped for the
    terminal with a formula prefix neutralised (escape.printed_csv_cell); numbers and NULL as they are."""
    if v is None or isinstance(v, bool) or _numeric(v):
        return v
    from assay.core.escape import printed_csv_cell

    return printed_csv_cell(str(v))


def run_sql(warehouse_path, query: str, fmt: str = "table", timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    with Warehouse.open(warehouse_path, read_only=True, config=SANDBOX, old_schema="read") as wh:
        cols, rows = _execute(wh.con, one_statement(wh.con, query), timeout_s)
    if cols is None:
        return ""
    if fmt == "json":
        return jsonout.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([_csv_cell(c) for c in cols])
        w.writerows([_csv_cell(v) for v in r] for r in rows)
        return buf.getvalue()
    from assay.core.tables import render as grid

    # stored text is shown escaped, whatever it holds; numeric columns (by their values, not how
    # they read: a VARCHAR of digits stays left) are right-aligned
    align = ["right" if any(v is not None for v in col) and all(v is None or _numeric(v) for v in col) else "left"
             for col in zip(*rows)] if rows else None
    table = grid(cols, [[_cell(v) for v in r] for r in rows], align=align)
    return f"{table}\n({len(rows)} row{'s' if len(rows) != 1 else ''})\n"
