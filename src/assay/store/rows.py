"""Python values handed to DuckDB as a table, without pyarrow: building an Arrow array from Python objects imports
pandas (pyarrow asks whether each list is a pandas object), 0.4 s that no command needs.

``registered(con, name, columns)`` makes ``{column: [values]}`` readable as the view ``name`` for a ``with`` block.
Each column becomes a numpy array DuckDB scans natively: ints, floats and bools as typed arrays, everything else
(str, bytes, datetime, None) as an object array whose type DuckDB reads from the values. A value is what pyarrow
would have made of it: ints mixed with floats become floats, numpy scalars their Python value. DuckDB reads NaN in
a numpy column as NULL, so a column holding a NaN goes through pyarrow as before (and imports pandas then).

DuckDB types an object column from a sample of 1,000 of its values; where the sample is all None, DuckDB 1.x then
calls pandas's ``first_valid_index`` on the numpy array and fails (an 11,429-document corpus without titles), and a
column whose only values fall outside the sample would be typed NULL. ``registered`` widens the sample to the whole
column for the registration.
"""

from __future__ import annotations

from contextlib import contextmanager

SAMPLE = 1000  # DuckDB's default pandas_analyze_sample


@contextmanager
def registered(con, name: str, columns: dict[str, list]):
    """``columns`` readable as the view ``name`` on ``con`` while the block runs, unregistered after."""
    rows = max((len(values) for values in columns.values()), default=0)
    wide = rows > SAMPLE  # DuckDB reads the setting when a query scans the view, so it holds for the whole block
    if wide:
        con.execute(f"SET pandas_analyze_sample = {int(rows)}")
    con.register(name, as_table(columns))
    try:
        yield
    finally:
        try:
            con.unregister(name)
            if wide:
                con.execute(f"SET pandas_analyze_sample = {SAMPLE}")
        except Exception:  # an aborted transaction refuses even this; the rollback drops the view
            pass


def as_table(columns: dict[str, list]):
    """``columns`` as an object DuckDB can register: numpy arrays, or a pyarrow table when a column needs it."""
    arrays = {}
    for column, values in columns.items():
        array = _array(list(values))
        if array is None:
            import pyarrow as pa

            return pa.table({c: list(v) for c, v in columns.items()})
        arrays[column] = array
    return arrays


def _array(values: list):
    """A numpy array DuckDB reads as pyarrow would have read ``values``; None when only pyarrow can (a NaN)."""
    import numpy as np

    kinds = set(map(type, values))
    if any(issubclass(k, np.generic) for k in kinds):
        values = [v.item() if isinstance(v, np.generic) else v for v in values]
        kinds = set(map(type, values))
    none = type(None)
    if kinds and kinds <= {int, bool} and int in kinds:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:  # past 64 bits: DuckDB reads the Python ints themselves
            pass
    elif kinds and kinds <= {int, float, bool, none} and float in kinds:
        if none not in kinds:
            array = np.array(values, dtype=np.float64)
            return None if np.isnan(array).any() else array
        values = [None if v is None else float(v) for v in values]
        if any(v != v for v in values if v is not None):
            return None
    elif kinds == {bool}:
        return np.array(values, dtype=np.bool_)
    return np.fromiter(values, dtype=object, count=len(values))
