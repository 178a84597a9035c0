"""Compacted segments of a lake, as readers see them: which runs a lake holds, and which files hold each table's rows.

`assay lake compact` (assay.store.lake.compact) rewrites the per-run partitions of a day of runs into one segment::

    LAKE/_compacted/<DAY>-<STAMP>/<table>.parquet

``DAY`` is the ``YYYYMMDD`` its runs' ids start with, ``STAMP`` when the compaction that wrote it started
(``YYYYMMDDTHHMMSSffffff-<hex>``), so a day's segments sort oldest first. One file per table that any of its runs
has rows in, holding every row of those runs exactly as their partitions held them (each row keeps its ``run_id``
column; a shared table keeps each run's copy, see assay.store.lake.compact for why). ``runs.parquet`` is written
last and is the segment's commit: a segment without it is not read.

A day's rows come from its *current* segment, the newest committed one (older ones of the day are superseded and
wait for their grace period to end before they are deleted); a committed run that no current segment holds comes
from its per-run partition, as in a lake never compacted. A run held by a current segment and still having its
per-run partition (kept through the grace period) is read from the segment only. ``_compacted`` starts with ``_``,
so a reader of the per-run layout (Hive partitioning, the table listing) never sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assay.core.errors import WarehouseError
from assay.store.lake.location import hidden, lake_location, remote_error, table_files

SEGMENTS = "_compacted"
COMMIT = "runs"  # the table whose file commits a segment, as the ``runs`` partition commits a run
_NAME = re.compile(r"^(\d{8})-(\d{8}T\d{12}-[0-9a-f]+)$")


@dataclass
class Segment:
    """One segment directory: ``name`` (``DAY-STAMP``), ``day``, ``files`` ({table: path in the file system}),
    ``mtime`` (its newest object's time, seconds), ``committed`` (its ``runs`` file is there)."""

    name: str
    day: str
    files: dict[str, str] = field(default_factory=dict)
    mtimes: dict[str, float] = field(default_factory=dict)

    @property
    def committed(self) -> bool:
        return COMMIT in self.files

    @property
    def mtime(self) -> float:
        return max(self.mtimes.values(), default=0.0)

    @property
    def committed_at(self) -> float:
        return self.mtimes.get(COMMIT, 0.0)


def segments(location) -> list[Segment]:
    """Every segment of the lake (committed or not; staging directories left out), oldest first within a day."""
    location = lake_location(location)
    found: dict[str, Segment] = {}
    base = location.key(SEGMENTS)
    for info in location.files(SEGMENTS):
        parts = info.path[len(base):].strip("/").split("/")
        if len(parts) != 2 or hidden(parts[0]) or not parts[1].endswith(".parquet"):
            continue
        match = _NAME.match(parts[0])
        if match is None:
            continue
        segment = found.setdefault(parts[0], Segment(parts[0], match.group(1)))
        table = parts[1].removesuffix(".parquet")
        segment.files[table] = info.path
        segment.mtimes[table] = info.mtime.timestamp() if info.mtime is not None else 0.0
    return sorted(found.values(), key=lambda s: s.name)


def current(all_segments: list[Segment]) -> dict[str, Segment]:
    """{day: its newest committed segment}."""
    out: dict[str, Segment] = {}
    for segment in all_segments:  # oldest first: a later one replaces an earlier one of its day
        if segment.committed:
            out[segment.day] = segment
    return out


def segment_runs(location, segment: Segment) -> list[str]:
    """The run ids a committed segment holds (its ``runs`` file's ``run_id`` column)."""
    import pyarrow.parquet as pq

    import pyarrow as pa

    path = segment.files[COMMIT]
    try:
        column = pq.read_table(path, columns=["run_id"], filesystem=location.fs).column("run_id")
    except (OSError, pa.ArrowException) as exc:
        if isinstance(exc, OSError) and not location.local and "Parquet" not in str(exc):
            raise remote_error(location, exc) from None
        why = str(exc).splitlines()[0]
        why = why.split("': ", 1)[-1]  # pyarrow's "Could not open Parquet input source '<path>': " names it again
        raise WarehouseError(f"lake {location}: {location.uri(SEGMENTS, segment.name, COMMIT + '.parquet')} is not "
                             f"a readable Parquet file ({why}); the runs of segment "
                             f"{segment.name} cannot be listed: restore the file, or move {SEGMENTS}/{segment.name} "
                             "aside (its runs go with it)") from None
    return sorted(set(column.to_pylist()))


class Holdings:
    """Where each committed run of a lake is read from, as of one listing: ``run_ids`` (every visible run, oldest
    id first), ``segment_of`` ({run id: its current segment}), ``loose`` ({run id: its ``runs`` partition file}:
    committed runs no current segment holds)."""

    def __init__(self, location):
        self.location = lake_location(location)
        self.segments = segments(self.location)
        self.current = current(self.segments)
        self.held: dict[str, list[str]] = {s.name: segment_runs(self.location, s) for s in self.current.values()}
        self.segment_of = {run: s for s in self.current.values() for run in self.held[s.name]}
        self.loose = {run: f for run, f in table_files(self.location, "runs").items() if run not in self.segment_of}
        self.run_ids = sorted(set(self.segment_of) | set(self.loose))
        # {table: {shared part file: the run ids using it}} (assay.store.lake.shared), once a reader has read the
        # visible runs' rows (``use_shared``); until then no shared part is read
        self.shared: dict[str, dict[str, list[str]]] = {}

    def use_shared(self, refs) -> None:
        """Read the shared parts the runs of ``refs`` (assay.store.lake.shared.run_refs) use."""
        from assay.store.lake.shared import used_parts

        self.shared = used_parts(self.location, refs)

    def shared_files(self, table: str, run_ids) -> list[str]:
        """The shared parts of ``table`` any of ``run_ids`` uses."""
        wanted = set(run_ids)
        return [f for f, users in sorted(self.shared.get(table, {}).items()) if wanted.intersection(users)]

    def files(self, table: str, run_ids) -> tuple[list[str], list[str]]:
        """The files holding ``table``'s rows of ``run_ids``: (per-run partition files, segment files), each as an
        engine opens it. A segment's file is listed when any of ``run_ids`` is in it (a segment is read whole)."""
        wanted = set(run_ids)
        per_run = table_files(self.location, table)
        loose = [per_run[r] for r in sorted(wanted) if r in per_run and r not in self.segment_of]
        held = []
        for segment in self.current.values():
            if table in segment.files and wanted.intersection(self.held[segment.name]):
                held.append(self.uri(segment, table))
        return loose, held

    def uri(self, segment: Segment, table: str) -> str:
        return self.location.uri(SEGMENTS, segment.name, f"{table}.parquet")

    def runs_of(self, file: str) -> list[str]:
        """The runs whose rows ``file`` (as ``files`` or ``shared_files`` gives it) holds (a shared part: every run
        using it)."""
        for parts in self.shared.values():
            if file in parts:
                return sorted(parts[file])
        for segment in self.current.values():
            if any(file == self.uri(segment, t) for t in segment.files):
                return self.held[segment.name]
        from pathlib import PurePosixPath

        return [PurePosixPath(file).parent.name.split("=", 1)[1]]


def holdings(location) -> Holdings:
    """The lake's Holdings, computed once per snapshot (assay.store.lake.location.LakeLocation.snapshot)."""
    location = lake_location(location)
    cached = getattr(location, "_holdings", None)
    if cached is not None:
        return cached
    found = Holdings(location)
    if location._listed is not None:  # a snapshot: its listings never change, nor do these
        location._holdings = found
    return found
