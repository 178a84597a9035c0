"""The interval memo: the bounds ``stats.intervals`` gave for exact inputs, kept in the warehouse.

A report (and a gate, an export) of a run gives every measure, level and slice an interval: a bootstrap of 1,000
resamples for graded values, which needs numpy and scipy. Their import and the resampling took about a third of
an ``assay report`` (0.36 -> 0.23 s on the demo without them, docs/benchmarks.md). The run computes those intervals once, in the transaction that
writes it, and stores each under a key of everything it depends on; a later report reads them back and imports
neither.

A key is the SHA-256 of: the method (``stats.py``'s source and numpy's and scipy's version files, so a change to
any of them makes every stored bound unreachable, never stale), the interval kind, the seed, the number of
resamples, and the values themselves, in order, as 64-bit floats. The same inputs give the same floats whether
computed alone or batched (``stats.intervals``), so a bound stored for one run serves any run, measure or slice
whose values are the same. A memo is never needed: what it lacks is computed, as before.
"""

from __future__ import annotations

import hashlib
import struct
from functools import lru_cache
from pathlib import Path

TABLE = "interval_memo"


@lru_cache(maxsize=1)
def method_id() -> str:
    """What every bound depends on besides its inputs: the code that computes it and the numeric libraries'
    versions (their version files, read without importing them)."""
    from importlib.util import find_spec

    from assay.measures import special, stats

    digest = hashlib.sha256(Path(stats.__file__).read_bytes())
    digest.update(Path(special.__file__).read_bytes())  # what computes them where scipy is not installed
    for package in ("numpy", "scipy"):
        spec = find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        version = Path(locations[0], "version.py") if locations else None
        digest.update(f"\0{package}\0".encode())
        digest.update(version.read_bytes() if version is not None and version.is_file() else b"-")
    return digest.hexdigest()


def memo_key(values, kind: str, seed, samples: int) -> str:
    """The key of ``stats.interval(values, kind, seed, samples)``."""
    values = [float(v) for v in values]
    digest = hashlib.sha256(f"{method_id()}\0{kind}\0{seed!r}\0{samples}\0{len(values)}\0".encode())
    digest.update(struct.pack(f"<{len(values)}d", *values))
    return digest.hexdigest()


def recall(warehouse, keys) -> dict[str, tuple[float, float]]:
    """{key: (low, high)} for the ``keys`` the memo holds. A connection without the table (a schema before
    migration 016) holds none; the lake readers have it, empty."""
    from assay.store.warehouse import engine

    keys = sorted(set(keys))
    if not keys:
        return {}
    try:
        rows = warehouse.con.execute(
            f"SELECT memo_key, ci_low, ci_high FROM {TABLE} WHERE memo_key IN ({', '.join('?' * len(keys))})",
            keys).fetchall()
    except engine().CatalogException:
        return {}
    return {key: (low, high) for key, low, high in rows}


def remember(warehouse, bounds: dict[str, tuple[float, float]]) -> int:
    """Store the ``bounds`` ({key: (low, high)}) the memo does not hold yet, inside the caller's transaction;
    returns how many were new."""
    known = recall(warehouse, bounds)
    new = {k: b for k, b in bounds.items() if k not in known}
    warehouse._insert(TABLE, ["memo_key", "ci_low", "ci_high"],
                      [(key, float(low), float(high)) for key, (low, high) in sorted(new.items())])
    return len(new)
