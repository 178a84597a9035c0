"""`assay lake compact` and `assay lake prune`: fewer, larger files, and old runs removed, without changing a result.

Compaction rewrites the committed per-run partitions of each UTC day of runs (the ``YYYYMMDD`` a run id starts
with) into one segment of that day (assay.store.lake.segments: ``LAKE/_compacted/<DAY>-<STAMP>/<table>.parquet``),
one file per table. A day that already has a segment gets a new one holding the old segment's rows and the day's
newer runs, and the new one supersedes the old. Every row is copied as it was, its ``run_id`` column with it; the
readers read a run from its day's current segment, else from its partitions, and deduplicate shared rows by key
as before, so every report, history and computed value is the same before and after (tests/store/lake/test_compact.py
compares them byte for byte).

Shared rows (corpus, chunks, judgments, tokens) are stored once per content key in ``LAKE/_shared``
(assay.store.lake.shared) by every writer since that layout, and a run's partitions hold only its own rows, so a
segment holds only those too: compaction never copies ``_shared`` (a hidden name, not a table). Runs written before
that layout carry their own copy of the shared rows in their partitions, and a segment keeps each such run's copy
as the partitions held it rather than one copy per key: pruning a run out of a segment must drop the shared rows
only that run needed, and one copy per key would need the list of runs that used it beside every row. A prune
removes the shared parts no remaining run uses, a grace period after they were written and only while no writer is
in flight (``collect_unused``): a run being written may use a part no committed run names yet.

Safe beside writers, which never lock: only runs whose ``runs`` partition was there when compaction listed the
lake are compacted, so a run being written, or committed after that listing, stays in its partitions and stays
visible. A segment commits as a run does: in a local directory it is written under ``_compacted/.tmp-<owner>-<name>``
and renamed into place whole; on an object store its objects are written under their final keys, ``runs.parquet``
last, and readers skip a segment without it. Nothing a reader may still be reading is deleted before the grace
period (``[lake] orphan_grace_s``, or ``--grace``) has passed since the commit that made it unneeded: superseded
segments, and the partitions of runs a segment holds, go at the end of a later compact or prune
(``collect_superseded``), and so does an uncommitted segment a killed compaction left.

A day's newest committed segment stands for the whole day, not run by run, so that a prune takes effect at once: a
run left out of the new segment is gone for readers while the old segment waits out its grace period. Two
compactions of one day at once each write a segment, and the newer stands: a run only the other took in is read
from its partitions again, which are deleted only for runs the standing segment holds, a grace period after its
commit; so nothing is lost unless a compaction outlasts the grace period. A prune beside a compaction may be undone
by it (the compaction's segment, written from the older one, holds the pruned run). Run them one at a time (a
scheduled job); writers beside either are safe.

Pruning removes whole runs, chosen by age (``--keep 30d``, from the time in the run id) or by count (``--keep 500``:
the newest runs by id), never a protected one: a run named in ``[lake] baselines`` of assay.toml or by
``--baseline``, and the newest complete run of each pipeline, which `lake gate` and `lake regress` name by default
(``latest``). A run's partitions go at once, its ``runs`` partition first, so it disappears whole; a run held by a
segment goes with a new segment of its day written without it, and the old one goes after the grace period.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from assay.core import scratch
from assay.core.errors import ConfigError, UsageError, WarehouseError
from assay.store.lake.location import hidden, lake_location, remote_error, table_files
from assay.store.lake.segments import COMMIT, SEGMENTS, Holdings, Segment, current, segment_runs, segments
from assay.store.lake.shared import SHARED, used_parts

STAGING = ".tmp-"  # a compaction's staging directory under _compacted: .tmp-<owner>-<segment name>
BATCH_ROWS = 100_000  # rows per batch streamed from the sources into a segment file (memory stays bounded)
_DAY = re.compile(r"^(\d{8})T(\d{6})")
_KEEP = re.compile(r"^\s*(\d+)\s*([dh]?)\s*$")


def run_day(run_id: str) -> str | None:
    """The UTC day (``YYYYMMDD``) a run id starts with, None for an id without one."""
    match = _DAY.match(run_id)
    return match.group(1) if match else None


def run_time(run_id: str) -> datetime | None:
    match = _DAY.match(run_id)
    if match is None:
        return None
    try:
        return datetime.strptime(match.group(1) + match.group(2), "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


@dataclass
class Written:
    """A segment a compact or prune committed: ``day``, ``name``, ``runs`` (how many it holds), ``added`` (the
    runs newly taken in from their partitions), ``dropped`` (runs left out by a prune), ``replaced`` (files it makes
    unneeded), ``files`` (the files it has)."""

    day: str
    name: str
    runs: int
    added: int = 0
    dropped: int = 0
    replaced: int = 0
    files: int = 0


@dataclass
class Outcome:
    written: list[Written] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # superseded segments and partitions deleted
    deleted: list[str] = field(default_factory=list)  # the pruned runs' partitions deleted
    undated: list[str] = field(default_factory=list)  # runs whose id has no date: never compacted
    pruned: list[str] = field(default_factory=list)  # runs removed (prune)
    protected: dict[str, str] = field(default_factory=dict)  # runs a prune would have removed, and why they stay
    waiting: int = 0  # superseded segments and partitions kept until the grace period ends
    unused: list[str] = field(default_factory=list)  # shared parts no run uses, deleted (prune)
    unused_waiting: int = 0  # shared parts no run uses, kept until the grace period ends or no writer is in flight


def _tables(location) -> list[str]:
    """The lake's tables (its non-hidden directories), ``runs`` last: it commits a segment."""
    names = [t for t in location.children() if not hidden(t) and t != COMMIT]
    return names + [COMMIT]


def _segment_name(day: str) -> str:
    return f"{day}-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"


def _grace(location, grace_s) -> float:
    if grace_s is None:
        return location.orphan_grace_s
    if grace_s < 0:
        raise UsageError(f"--grace must be a number of seconds >= 0, not {grace_s}")
    return float(grace_s)


def _connection(location):
    """A DuckDB connection that reads the lake's files (through its file system when it is an object store)."""
    import duckdb

    con = duckdb.connect(":memory:")
    if not location.local:
        from assay.store.lake.reader import register_store

        register_store(con, location)
    return con


def _write_segment(location, con, day: str, sources: dict[str, list[str]], drop: list[str],
                   before_commit=None) -> tuple[str, int]:
    """Write one segment of ``day``: each table's rows from ``sources`` ({table: files, in run order}), leaving out
    the rows of runs in ``drop``; ``runs`` last, as the commit. Returns (its name, the files written)."""
    import pyarrow.parquet as pq

    name = _segment_name(day)
    local = location.local
    if local:
        staging = Path(location.key(SEGMENTS)) / f"{scratch.name(STAGING)}{name}"
        staging.mkdir(parents=True)
    written = 0
    try:
        order = [t for t in sources if t != COMMIT] + [COMMIT]
        for table in order:
            if table == COMMIT and before_commit is not None:
                before_commit()
            files = sources.get(table, [])
            if not files:
                continue
            sql = "SELECT * FROM read_parquet(?, union_by_name = true, hive_partitioning = false)"
            params: list = [files]
            if drop:
                sql += " WHERE run_id NOT IN (SELECT unnest(?))"
                params.append(drop)
            batches = con.execute(sql, params).to_arrow_reader(BATCH_ROWS)
            target = str(staging / f"{table}.parquet") if local else location.key(SEGMENTS, name, f"{table}.parquet")
            writer = None
            try:
                for batch in batches:
                    if writer is None:
                        writer = pq.ParquetWriter(target, batches.schema, filesystem=None if local else location.fs)
                    writer.write_batch(batch)
                if writer is None and table == COMMIT:  # every run pruned: an empty segment still supersedes
                    writer = pq.ParquetWriter(target, batches.schema, filesystem=None if local else location.fs)
            finally:
                if writer is not None:
                    writer.close()
            if writer is None:
                continue
            written += 1
            if local:
                with open(target, "rb") as f:  # on disk before the rename makes it visible
                    os.fsync(f.fileno())
        if local:
            os.rename(staging, Path(location.key(SEGMENTS)) / name)
    except BaseException as exc:
        if local:
            shutil.rmtree(staging, ignore_errors=True)
            if isinstance(exc, OSError):  # a full disk, a lost mount: one line, and nothing was changed
                raise WarehouseError(f"cannot compact lake {location}: {exc.strerror or exc}; its staging is removed "
                                     "and the lake is as it was: free space or fix the directory and run again"
                                     ) from None
        else:  # runs first: the segment is uncommitted before anything else goes
            for table in [COMMIT] + [t for t in sources if t != COMMIT]:
                try:
                    location.fs.delete_file(location.key(SEGMENTS, name, f"{table}.parquet"))
                except OSError:
                    pass
            if isinstance(exc, OSError):
                raise remote_error(location, exc, "cannot compact") from None
        raise
    return name, written


def _prepare(location) -> None:
    if location.local:
        root = Path(location.key())
        if not root.is_dir():
            raise WarehouseError(f"no lake at {location}: not a directory")
        for staging, _ in scratch.stale(root / SEGMENTS, STAGING):  # what a killed compaction left
            shutil.rmtree(staging, ignore_errors=True)


def compact(lake, grace_s: float | None = None, now: float | None = None, before_commit=None) -> Outcome:
    """Compact ``lake`` (a path, URL or LakeLocation): every day with committed runs not yet in its segment gets a
    new segment, then what is superseded past the grace period is removed (``collect_superseded``).
    ``before_commit``: called before each segment's commit (tests: a writer publishing meanwhile)."""
    location = lake_location(lake)
    grace = _grace(location, grace_s)
    _prepare(location)
    snap = location.snapshot()
    held = Holdings(snap)
    outcome = Outcome()
    days: dict[str, list[str]] = {}
    for run_id in sorted(held.loose):
        day = run_day(run_id)
        if day is None:
            outcome.undated.append(run_id)
        else:
            days.setdefault(day, []).append(run_id)
    tables = _tables(snap)
    con = _connection(snap)
    try:
        for day, runs in sorted(days.items()):
            base = held.current.get(day)
            sources: dict[str, list[str]] = {}
            replaced = 0
            for table in tables:
                files = table_files(snap, table)
                mine = [files[r] for r in runs if r in files]
                replaced += len(mine)
                if base is not None and table in base.files:
                    replaced += 1
                    mine = [held.uri(base, table)] + mine
                if mine:
                    sources[table] = mine
            name, written = _write_segment(location, con, day, sources, [], before_commit)
            total = len(runs) + (len(held.held[base.name]) if base is not None else 0)
            outcome.written.append(Written(day, name, total, added=len(runs), replaced=replaced, files=written))
    finally:
        con.close()
    outcome.removed, outcome.waiting = collect_superseded(location, grace, now)
    return outcome


def collect_superseded(location, grace_s: float, now: float | None = None) -> tuple[list[str], int]:
    """Remove what no reader opened after the grace period needs: the segments of a day older than its current one,
    and the partitions of the runs the current one holds, once it was committed ``grace_s`` ago; and an uncommitted
    segment (a killed compaction) whose newest file is that old. ``now``: this machine's clock unless given (the
    files' times are the store's, so the grace must exceed the skew between the two). Returns (what was removed,
    how many things wait for the grace period)."""
    location = lake_location(location)
    present = time.time() if now is None else now
    listed = location.snapshot()
    every = segments(listed)
    newest = current(every)
    removed: list[str] = []
    waiting = 0
    for segment in every:
        keep = newest.get(segment.day)
        if segment is keep:
            continue
        # superseded: unneeded since the current one was committed; uncommitted (a compaction killed, or one
        # still writing): judged by its newest file, as a killed writer's objects are
        since = keep.committed_at if segment.committed else segment.mtime
        if present - since < grace_s:
            waiting += 1
            continue
        removed += _remove_segment(location, segment)
    tables = _tables(listed)
    for segment in newest.values():
        runs = segment_runs(listed, segment)
        files = {table: table_files(listed, table) for table in tables}
        left = [(t, r) for t in tables for r in runs if r in files[t]]
        if not left:
            continue
        if present - segment.committed_at < grace_s:
            waiting += len({r for _, r in left})
            continue
        for table, run_id in left:  # `runs` last (tables end with it): the run stays whole until then
            removed.append(_remove_partition(location, files[table][run_id]))
    return removed, waiting


def _remove_segment(location, segment: Segment) -> list[str]:
    if location.local:
        path = location.key(SEGMENTS, segment.name)
        shutil.rmtree(path, ignore_errors=True)
        return [path]
    removed = []
    for table in sorted(segment.files, key=lambda t: t != COMMIT):  # runs first: uncommitted before the rest goes
        try:
            location.fs.delete_file(segment.files[table])
            removed.append(segment.files[table])
        except OSError:  # already gone (another process removed it)
            pass
    return removed


def _remove_partition(location, file: str) -> str:
    """Delete one partition file (locally its ``run_id=`` directory); returns what was deleted."""
    if location.local:
        directory = str(Path(file).parent)
        shutil.rmtree(directory, ignore_errors=True)
        return directory
    key = file.removeprefix(f"{location.scheme}://")
    try:
        location.fs.delete_file(key)
    except OSError:
        pass
    return key


# ------------------------------------------------------------------------------------------------------- prune


def parse_keep(text: str) -> tuple[str, int]:
    """``--keep``: ``("count", N)`` for ``500``, ``("age", seconds)`` for ``30d`` or ``12h``."""
    match = _KEEP.match(str(text))
    if match is None or int(match.group(1)) <= 0:
        raise UsageError(f"--keep {text!r}: give a number of runs to keep (500) or an age (30d, 12h), more than 0")
    number, unit = int(match.group(1)), match.group(2)
    if not unit:
        return "count", number
    return "age", number * (86400 if unit == "d" else 3600)


def protected_runs(reader, baselines) -> dict[str, str]:
    """{run id: why it is never pruned}: each run ``baselines`` names ((reference, where it was named) pairs,
    resolved as `lake regress --baseline` resolves them), and the newest complete run of each pipeline."""
    keep: dict[str, str] = {}
    for ref, where in baselines:
        keep.setdefault(reader.resolve_run_id(ref), f"a baseline ({where})")
    rows = reader.con.execute("SELECT pipeline, max(run_id) FROM runs WHERE status = 'complete' "
                              "GROUP BY pipeline").fetchall()
    for pipeline, run_id in rows:
        keep.setdefault(run_id, f"the newest complete {pipeline} run (`lake gate` and `lake regress` name it as "
                                "latest)")
    return keep


def prune(lake, keep: str, baselines=(), dry_run: bool = False, grace_s: float | None = None,
          now: float | None = None) -> Outcome:
    """Remove the runs of ``lake`` that ``keep`` (``parse_keep``) leaves out, except the protected ones
    (``protected_runs``; ``baselines``: (run reference, where it was named) pairs). ``dry_run``: say what would go,
    remove nothing. ``now``: the time ages are measured from and the grace period ends by (default: the clock)."""
    from assay.store.lake.reader import open_duckdb_lake

    how, amount = parse_keep(keep)
    location = lake_location(lake)
    grace = _grace(location, grace_s)
    _prepare(location)
    snap = location.snapshot()
    present = time.time() if now is None else now
    reader = open_duckdb_lake(snap)
    try:
        if reader.damaged:
            from assay.store.lake import damaged_message

            raise WarehouseError(damaged_message(reader.path, reader.damaged) + "; nothing was pruned")
        protect = protected_runs(reader, baselines)
    finally:
        reader.close()
    held = Holdings(snap)
    newest_first = sorted(held.run_ids, reverse=True)
    if how == "count":
        candidates = newest_first[amount:]
    else:
        cutoff = datetime.fromtimestamp(present, timezone.utc) - timedelta(seconds=amount)
        candidates = [r for r in newest_first if run_time(r) is not None and run_time(r) < cutoff]
    outcome = Outcome()
    outcome.protected = {r: protect[r] for r in candidates if r in protect}
    outcome.pruned = sorted(r for r in candidates if r not in protect)
    if dry_run:
        return outcome
    if not outcome.pruned:  # a part an earlier prune left waiting may be due now
        outcome.unused, outcome.unused_waiting = collect_unused(location, grace, now)
        return outcome
    gone = set(outcome.pruned)
    tables = _tables(snap)
    files = {table: table_files(snap, table) for table in tables}
    for run_id in outcome.pruned:  # partitions: `runs` first, so the run disappears whole at once
        for table in [COMMIT] + [t for t in tables if t != COMMIT]:
            if run_id in files[table]:
                outcome.deleted.append(_remove_partition(location, files[table][run_id]))
    con = _connection(snap)
    try:
        for day, segment in sorted(held.current.items()):
            inside = gone.intersection(held.held[segment.name])
            if not inside:
                continue
            sources = {t: [held.uri(segment, t)] for t in [*segment.files]}
            name, written = _write_segment(location, con, day, sources, sorted(inside))
            outcome.written.append(Written(day, name, len(held.held[segment.name]) - len(inside),
                                           dropped=len(inside), files=written))
    finally:
        con.close()
    outcome.removed, outcome.waiting = collect_superseded(location, grace, now)
    outcome.unused, outcome.unused_waiting = collect_unused(location, grace, now)  # parts only pruned runs used
    return outcome


# ------------------------------------------------------------------------------------------------ shared parts


def in_flight(location, grace_s: float, present_s: float) -> bool:
    """Whether a writer may be writing now: locally a staging directory in the lake (but one a process of this machine
    that no longer runs left), on an object store an object of an uncommitted run younger than the grace period.
    Such a writer may use a part no committed run names yet."""
    if location.local:
        from assay.store.lake.writer import STAGING as WRITING

        root = Path(location.key())
        if not root.is_dir():
            return False
        dead = {path.name for path, _ in scratch.stale(root, WRITING)}
        return any(entry.startswith(WRITING) and entry not in dead for entry in os.listdir(root))
    committed = set(table_files(location, "runs"))
    for table in location.children():
        if hidden(table) or table == "runs":
            continue
        for info in location.files(table):
            parts = info.path[len(location.key(table)):].strip("/").split("/")
            if len(parts) == 2 and parts[0].startswith("run_id=") and parts[0][7:] not in committed:
                mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
                if present_s - mtime < grace_s:
                    return True
    return False


def collect_unused(location, grace_s: float, now: float | None = None) -> tuple[list[str], int]:
    """Remove the shared parts no visible run uses, once written ``grace_s`` ago and while no writer is in flight
    (``in_flight``: a run being written may use a part that no committed run names). Returns (the parts removed,
    how many wait)."""
    from assay.store.lake.reader import runs_file_refs
    from assay.store.lake.segments import holdings

    location = lake_location(location)
    present_s = time.time() if now is None else now
    snap = location.snapshot()
    used: set[str] = set()
    for table, parts in used_parts(snap, runs_file_refs(snap, holdings(snap).run_ids)).items():
        used.update(parts)
    unused = [info for info in snap.files(SHARED)
              if info.path.endswith(".parquet") and snap.uri(info.path[len(snap.key()):].strip("/")) not in used]
    if not unused:
        return [], 0
    flying = in_flight(location, grace_s, present_s)
    removed, waiting = [], 0
    for info in unused:
        mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
        if flying or present_s - mtime < grace_s:
            waiting += 1
            continue
        try:
            location.fs.delete_file(info.path)
            removed.append(info.path)
        except OSError:  # another prune removed it first
            pass
    return removed, waiting


def config_baselines(config: dict) -> list[tuple[str, str]]:
    """``[lake] baselines`` of assay.toml as (reference, where) pairs."""
    value = config.get("lake", {}).get("baselines", [])
    where = f"{config.get('_path', 'assay.toml')} [lake] baselines"
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a list of run ids, e.g. [\"20261130T120000-abc123\"], not {value!r}")
    return [(v, where) for v in value]
