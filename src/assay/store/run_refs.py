"""What a person types to name a stored run, and the run it names: the one place run references are read.

A reference is, in this order:

- ``latest`` (or nothing): the newest run; ``latest~N``: the run N before it; ``previous``: ``latest~1``.
  Newest means started last (ties by id). Counted among complete runs where a command needs metrics
  (`report`, `compare`, `export`...), among every run where it checks a run's status itself (`gate`, `regress`,
  `answers show`), so that a failed newest run fails a gate instead of being stepped over.
- a run's full id;
- a name given to a run (`assay run --name NAME`, `assay tag RUN NAME`; table ``run_names``);
- any unique part of an id: a prefix (``20261201T0915``), the random suffix (``ab12cd``), any piece. A part that
  several ids contain lists them (AmbiguousRunId).

A name starts with a letter, holds letters, digits and ``. _ -``, and cannot read as another kind of reference:
not ``latest``, ``previous`` or ``best`` (`regress --baseline best`), and not hex digits alone, which could be a
piece of an id. Warehouses, DuckDB lakes and Spark lakes resolve through here (the SQL is in ``sql/runs/``); a
lake holds no names.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from assay.core.errors import AmbiguousRunId, RunNotFound, UsageError, WarehouseError

LATEST = "latest"
PREVIOUS = "previous"
RESERVED = (LATEST, PREVIOUS, "best")
_BACK = re.compile(r"^latest~(\d{1,6})$")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
_HEX = re.compile(r"^[0-9A-Fa-f]+$")


def steps_back(ref: str | None) -> int | None:
    """How many runs before the newest ``ref`` counts back (0 for latest), or None when it names a run otherwise."""
    if ref in (None, "", LATEST):
        return 0
    if ref == PREVIOUS:
        return 1
    m = _BACK.match(ref)
    return int(m.group(1)) if m else None


def is_latest(ref: str | None) -> bool:
    return steps_back(ref) == 0


def resolve(source, ref: str | None, complete: bool = True) -> str:
    """The id of the run ``ref`` names in ``source`` (a warehouse or a lake reader). ``complete``: only a run that
    completed will do (a failed or blocked one is named in the error); else any run. RunNotFound (or its subclass
    AmbiguousRunId) when none or several match."""
    back = steps_back(ref)
    if back is not None:
        return _counted_back(source, ref, back, complete)
    _, rows = source.query("runs/matching", part=ref)
    exact = [r for r in rows if r[0] == ref]
    if exact:
        return _usable(exact[0], complete)
    _, named = source.query("runs/named", run_name=ref)
    if named:
        run_id, status, pipeline = named[0]
        if status is None:
            raise RunNotFound(f"name {ref!r} names run {run_id}, which is not in {source.path}")
        return _usable(named[0], complete)
    if complete:
        done = [r for r in rows if r[1] == "complete"]
        if done:
            return _one(ref, done, lambda r: f"{r[0]} ({r[2]})")[0]
        if len(rows) > 1:
            raise AmbiguousRunId(ref, [f"{r[0]} ({r[2]}, {r[1]})" for r in rows], note=", none of them complete")
    if rows:
        return _usable(_one(ref, rows, _described), complete)
    raise RunNotFound(f"no run {ref!r} in {source.path}; {_lister(source)} lists them")


def _described(row) -> str:
    run_id, status, pipeline = row
    return f"{run_id} ({pipeline}" + ("" if status == "complete" else f", {status}") + ")"


def _one(ref: str, rows: list, describe):
    """The single row; else AmbiguousRunId listing them."""
    if len(rows) == 1:
        return rows[0]
    raise AmbiguousRunId(ref, [describe(r) for r in rows])


def _usable(row, complete: bool) -> str:
    run_id, status, _ = row
    if complete and status != "complete":
        raise RunNotFound(f"run {run_id} has status {status}: it is stored for inspection but has no "
                          f"metrics; `assay answers show {run_id}` shows what each question got")
    return run_id


def _counted_back(source, ref, back: int, complete: bool) -> str:
    _, rows = source.query("runs/newest")
    pool = [r for r in rows if r[1] == "complete"] if complete else rows
    if not pool:
        raise RunNotFound(f"warehouse {source.path} has no runs yet; start one with `assay run`" if not rows else
                          f"warehouse {source.path} has no complete runs ({len(rows)} stored did not complete; "
                          "`assay runs` lists them)")
    if back >= len(pool):
        kind = "complete runs" if complete else "runs"
        raise RunNotFound(f"{ref} is {back} run(s) before the newest, but {source.path} has {len(pool)} {kind}; "
                          "`assay runs` lists them")
    return pool[back][0]


# ---------------------------------------------------------------------------------------------------- names


def check_name(name: str) -> str:
    """``name`` if a run may be given it, else UsageError (exit code 2) saying what a name may be."""
    if name in RESERVED or steps_back(name) is not None:
        raise UsageError(f"{name!r} cannot name a run: latest, latest~N, previous and best already mean runs")
    if not NAME.match(name):
        raise UsageError(f"{name!r} cannot name a run: a name starts with a letter and holds only letters, digits "
                         "and . _ - (64 characters at most), e.g. baseline-2026-12")
    if _HEX.match(name):
        raise UsageError(f"{name!r} cannot name a run: hex digits alone could be part of a run id; add a word, "
                         f"e.g. {name}-baseline")
    return name


def named_run(source, name: str) -> str | None:
    """The id of the run ``name`` names, or None."""
    _, rows = source.query("runs/named", run_name=name)
    return rows[0][0] if rows else None


def names_by_run(source) -> dict[str, list[str]]:
    """{run id: its names, sorted}."""
    _, rows = source.query("runs/names")
    out: dict[str, list[str]] = {}
    for name, run_id, _ in rows:
        out.setdefault(run_id, []).append(name)
    return out


def check_free(source, name: str) -> None:
    """WarehouseError when ``name`` already names a run (what `assay run --name` checks before it computes)."""
    check_name(name)
    taken = named_run(source, name)
    if taken is not None:
        raise WarehouseError(f"name {name!r} already names run {taken}; choose another, or move it to the new run "
                             f"afterwards with `assay tag --force RUN {name}`")


def tag(warehouse, ref: str, name: str, force: bool = False) -> tuple[str, str | None]:
    """Give the run ``ref`` names (any status) the name ``name``, in one transaction. Returns (run id, the run
    the name named before: None when it was free, the run's own id when it named this run already). A name
    already naming another run moves only with ``force``."""
    check_name(name)
    with warehouse.transaction():
        run_id = resolve(warehouse, ref, complete=False)
        before = named_run(warehouse, name)
        if before == run_id:
            return run_id, before
        if before is not None and not force:
            raise WarehouseError(f"name {name!r} already names run {before}; give --force to move it to run "
                                 f"{run_id}")
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        warehouse.query("runs/name_move" if before else "runs/name_add", run_name=name, run_id=run_id, named_at=now)
    return run_id, before


def untag(warehouse, name: str) -> str:
    """Take ``name`` off its run; returns the run it named. RunNotFound when no run has it."""
    with warehouse.transaction():
        run_id = named_run(warehouse, name)
        if run_id is None:
            raise RunNotFound(f"no run is named {name!r} in {warehouse.path}; `assay runs` shows the names")
        warehouse.query("runs/name_delete", run_name=name)
    return run_id


def _lister(source) -> str:
    """The command that lists the runs of ``source``: a lake reader (it keeps the visible ``run_ids``) or a
    warehouse."""
    return f"`assay lake runs {source.path}`" if hasattr(source, "run_ids") else "`assay runs`"
