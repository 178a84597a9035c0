"""`assay sql`: read-only SQL against the warehouse, printed as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json

from assay.errors import AssayError
from assay.warehouse import Warehouse


def _cell(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def run_sql(warehouse_path, query: str, fmt: str = "table") -> str:
    import duckdb

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        try:
            cur = wh.con.execute(query)
        except duckdb.Error as exc:
            raise AssayError(f"SQL failed: {exc}") from None
        if cur.description is None:
            return ""
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    if fmt == "json":
        return json.dumps([dict(zip(cols, r)) for r in rows], indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    table = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in table]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines) + "\n"
