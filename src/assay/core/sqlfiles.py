"""SQL lives in sql/ as files, loaded by name ('measures/ndcg', 'migrations/001_init').

Files outside sql/ (a user's measure directory) join under names of their own with ``set_extra_files``;
they load, include and are included exactly like the shipped ones."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from assay.core.errors import AssayError


def sql_root() -> Path:
    packaged = Path(__file__).parents[1] / "sql"  # wheel installs: force-included next to the package
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "sql"  # editable installs and source checkouts


@lru_cache(maxsize=None)
def _index() -> dict[str, Path]:
    root = sql_root()
    index: dict[str, Path] = {}
    for path in sorted(root.rglob("*.sql"), key=lambda p: p.parts):  # Path's own order, without its slow __lt__
        name = path.relative_to(root).with_suffix("").as_posix()
        key = name.lower()
        if key in index:
            raise AssayError(f"duplicate SQL file name {name!r} ({index[key]} and {path})")
        index[key] = path
    return index


_extra: dict[str, Path] = {}  # name (lower case) -> a file outside sql/, e.g. a user's measure


def set_extra_files(files: dict[str, Path]) -> None:
    """Make ``files`` (name -> path) loadable by name, replacing the extra files set before. A name that
    is already a file under sql/ is refused, naming both files."""
    index = _index()
    chosen: dict[str, Path] = {}
    for name, path in files.items():
        key = name.lower()
        other = index.get(key) or chosen.get(key)
        if other is not None:
            raise AssayError(f"duplicate SQL file name {name!r} ({other} and {path})")
        chosen[key] = Path(path)
    _extra.clear()
    _extra.update(chosen)


def _path(name: str) -> Path | None:
    key = name.lower()
    return _extra.get(key) or _index().get(key)


def sql_path(name: str) -> Path:
    """The file behind a SQL name."""
    path = _path(name)
    if path is None:
        raise AssayError(f"no SQL file named {name!r} under {sql_root()}")
    return path


def sql_names(prefix: str = "") -> list[str]:
    """Every SQL name (shipped first, then extra files) starting with ``prefix``, each group sorted."""
    return [n for n in list(_index()) + sorted(_extra) if n.startswith(prefix.lower())]


INCLUDE = re.compile(r"^--\s*@include\s+(\S+)\s*$", re.M)


def load_sql(name: str, _seen: tuple = ()) -> str:
    """The named file's SQL. A line ``-- @include other/name`` is replaced by that file's SQL (text only, so
    the result stays plain portable SQL): measures that share their working, like the span measures, each
    keep one small file of their own."""
    path = sql_path(name)
    if name.lower() in _seen:
        raise AssayError(f"SQL file {name!r} includes itself through {' -> '.join(_seen)}")
    text = path.read_text(encoding="utf-8")
    return INCLUDE.sub(lambda m: load_sql(m.group(1), _seen + (name.lower(),)).rstrip(), text)


def _numbered() -> list[tuple[int, str, str]]:
    """(version, name, SQL name) of every numbered migration, in order, their files not read."""
    found = []
    for name in _index():
        m = re.match(r"^migrations/(\d+)_(\w+)$", name)
        if m:
            found.append((int(m.group(1)), m.group(2), name))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise AssayError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return found


def latest_migration() -> int:
    """The version a warehouse has once every migration is applied (what opening one checks, reading no SQL)."""
    return _numbered()[-1][0]


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every numbered migration, in order."""
    return [(version, name, load_sql(sql_name)) for version, name, sql_name in _numbered()]
