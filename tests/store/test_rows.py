"""assay.store.rows hands Python values to DuckDB as pyarrow did, without importing pandas: each column shape a writer
passes is inserted into a typed table both ways (pyarrow is the reference) and read back equal, value and type."""

import datetime as dt
import math
import subprocess
import sys

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from assay.store.rows import registered

WHEN = dt.datetime(2026, 11, 30, 16, 30, 34, 123456)
CASES = [
    ("VARCHAR", ["a", "é", "", "x" * 5000]),
    ("VARCHAR", ["a", None, "b"]),
    ("VARCHAR", [None, None]),
    ("INTEGER", [1, 2, 3]),
    ("INTEGER", [None] * 3000 + [5]),
    ("BIGINT", [1, 2**40, -(2**62)]),
    ("DOUBLE", [0.1, 1 / 3, 1e-300, -0.0]),
    ("DOUBLE", [1, 0.5, 0]),  # ints among floats, as measure values are
    ("DOUBLE", [1] * 5000 + [0.5]),
    ("DOUBLE", [0.25, None, 1]),
    ("DOUBLE", [np.float32(0.1), np.float32(2.5)]),
    ("DOUBLE", [np.float32(0.1), None]),
    ("DOUBLE", [np.float64(0.1), 0.2]),
    ("INTEGER", [np.int32(3), np.int64(4), None]),
    ("BOOLEAN", [True, False]),
    ("BOOLEAN", [True, None]),
    ("TIMESTAMP", [WHEN, WHEN.replace(microsecond=0)]),
    ("TIMESTAMP", [None, WHEN]),
    ("BLOB", [b"\x00\x01\xff", np.arange(4, dtype=np.float32).tobytes()]),
    ("DOUBLE", [0.5, float("nan")]),  # a NaN: pyarrow, which keeps it a NaN
    ("DOUBLE", [float("nan"), None]),
]


def _insert(kind, values, through_rows: bool):
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t (i INTEGER, v {kind})")
    columns = {"i": list(range(len(values))), "v": values}
    if through_rows:
        with registered(con, "_rows", columns):
            con.execute("INSERT INTO t SELECT i, v FROM _rows")
    else:
        con.register("_rows", pa.table(columns))
        con.execute("INSERT INTO t SELECT i, v FROM _rows")
    return con.execute("SELECT i, v, typeof(v) FROM t ORDER BY i").fetchall()


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("kind,values", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_a_column_reads_as_through_pyarrow(kind, values):
    ours, reference = _insert(kind, values, True), _insert(kind, values, False)
    assert len(ours) == len(reference) == len(values)
    for row, ref in zip(ours, reference):
        assert all(_same(a, b) for a, b in zip(row, ref)), (row, ref)


def test_no_rows_and_a_membership_view():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (q VARCHAR)")
    con.execute("INSERT INTO t VALUES ('a'), ('b')")
    with registered(con, "_keep", {"q": []}):
        assert con.execute("SELECT q FROM t WHERE q IN (SELECT q FROM _keep)").fetchall() == []
    with registered(con, "_keep", {"q": ["b"]}):
        assert con.execute("SELECT q FROM t WHERE q IN (SELECT q FROM _keep)").fetchall() == [("b",)]
    assert con.execute("SELECT COUNT(*) FROM duckdb_views() WHERE view_name = '_keep'").fetchall() == [(0,)]


def test_registering_rows_imports_neither_pandas_nor_pyarrow():
    """Typed columns never import them. A column of objects (strings, NULLs) does on DuckDB 1.x, whose scan of a
    numpy object array loads pandas to tell its NA apart (~0.4 s once per process); DuckDB 2's does not."""
    code = ("import sys, duckdb\n"
            "from assay.store.rows import registered\n"
            "def loaded(): return sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules)\n"
            "con = duckdb.connect()\n"
            "con.execute('CREATE TABLE t (a INTEGER, c DOUBLE, d BOOLEAN)')\n"
            "with registered(con, 't_rows', {'a': [1, 2], 'c': [0.5, 1], 'd': [True, False]}):\n"
            "    con.execute('INSERT INTO t SELECT * FROM t_rows')\n"
            "typed = loaded()\n"
            "con.execute('CREATE TABLE o (a INTEGER, b VARCHAR)')\n"
            "with registered(con, 'o_rows', {'a': [1, None], 'b': ['x', None]}):\n"
            "    con.execute('INSERT INTO o SELECT * FROM o_rows')\n"
            "assert con.execute('SELECT COUNT(*) FROM t UNION ALL SELECT COUNT(*) FROM o').fetchall() == [(2,), (2,)]\n"
            "print(typed, loaded())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    objects = "[]" if int(duckdb.__version__.split(".")[0]) >= 2 else "['pandas', 'pyarrow']"
    assert out.stdout.strip() == f"[] {objects}"


def test_a_long_object_column_whose_sample_is_all_none_is_read_whole(tmp_path):
    # DuckDB types an object column from 1,000 sampled values: an all-None sample made DuckDB 1.x call pandas's
    # first_valid_index on the numpy array (a corpus of 11,429 documents without titles), and a value outside the
    # sample was typed NULL.
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    n = 5000
    titles = [None] * n
    titles[-1] = "last"
    with registered(con, "v", {"id": list(range(n)), "title": titles, "none": [None] * n}):
        con.execute("CREATE TABLE t AS SELECT * FROM v")
    assert con.execute("SELECT typeof(title), count(title), max(title) FROM t GROUP BY 1").fetchall() == [
        ("VARCHAR", 1, "last")
    ]
    assert con.execute("SELECT count(*), count(none) FROM t").fetchall() == [(n, 0)]
    assert con.execute("SELECT current_setting('pandas_analyze_sample')").fetchall() == [(1000,)]
