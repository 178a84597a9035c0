"""SQL lives in sql/ as files, loaded by name ('measures/ndcg', 'migrations/001_init')."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from assay.errors import AssayError


def sql_root() -> Path:
    packaged = Path(__file__).parent / "sql"  # wheel installs: force-included next to the package
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "sql"  # editable installs and source checkouts


@lru_cache(maxsize=None)
def _index() -> dict[str, Path]:
    root = sql_root()
    index: dict[str, Path] = {}
    for path in sorted(root.rglob("*.sql")):
        name = path.relative_to(root).with_suffix("").as_posix()
        key = name.lower()
        if key in index:
            raise AssayError(f"duplicate SQL file name {name!r} ({index[key]} and {path})")
        index[key] = path
    return index


INCLUDE = re.compile(r"^--\s*@include\s+(\S+)\s*$", re.M)


def load_sql(name: str, _seen: tuple = ()) -> str:
    """The named file's SQL. A line ``-- @include other/name`` is replaced by that file's SQL (text only, so
    the result stays plain portable SQL): measures that share their working, like the span measures, each
    keep one small file of their own."""
    path = _index().get(name.lower())
    if path is None:
        raise AssayError(f"no SQL file named {name!r} under {sql_root()}")
    if name.lower() in _seen:
        raise AssayError(f"SQL file {name!r} includes itself through {' -> '.join(_seen)}")
    text = path.read_text(encoding="utf-8")
    return INCLUDE.sub(lambda m: load_sql(m.group(1), _seen + (name.lower(),)).rstrip(), text)


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every numbered migration, in order."""
    found = []
    for name in _index():
        m = re.match(r"^migrations/(\d+)_(\w+)$", name)
        if m:
            found.append((int(m.group(1)), m.group(2), load_sql(name)))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise AssayError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return found
