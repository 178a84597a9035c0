"""Which stored run a check is about, and refusing one that did not complete.

``latest`` is the newest run recorded, whatever its status. `assay gate` and `assay regress` check
that run: when it is ``failed`` or ``blocked`` (see assay.runs.runner) they fail with exit code 8 and say
which run and why, and never fall back to the complete run before it, so a CI job whose run broke can
never pass on a stale one. An earlier complete run is checked only when named (its id, a part of it, a name,
``latest~N``: assay.store.run_refs, counting every run). A baseline
(`regress --baseline latest`) is the newest complete comparable run before the candidate; the runs
that did not complete in between are named, never skipped silently.
"""

from __future__ import annotations

import json

from assay.core.errors import RunFailed

_WHY = {"blocked": "the model endpoint rate-limited every request",
        "failed": "its answer stage could not run"}


def outcomes(warehouse, prefix: str = "") -> list[dict]:
    """Runs whose id starts with ``prefix``, newest first, with ``status`` and ``reason`` (None when complete)."""
    _, rows = warehouse.query("reports/run_outcomes", prefix=prefix)
    out = []
    for run_id, started, status, stats, pipeline, jhash, chash in rows:
        reason = None
        if status != "complete":
            reason = (json.loads(stats or "{}").get("outcome") or {}).get("reason") or _WHY.get(status, status)
        out.append({"run_id": run_id, "started_at": started, "status": status, "reason": reason,
                    "pipeline": pipeline, "judgments_hash": jhash, "corpus_hash": chash})
    return out


def resolve_any(warehouse, run_ref: str | None) -> dict:
    """The run a reference names, whatever its status (assay.store.run_refs: ``latest`` or nothing is the newest run,
    ``latest~N`` counts back through every run; an id, a name or a unique part of an id names that run)."""
    from assay.store.run_refs import resolve

    run_id = resolve(warehouse, run_ref, complete=False)
    return next(r for r in outcomes(warehouse, run_id) if r["run_id"] == run_id)


def resolve_checked(warehouse, run_ref: str | None, doing: str = "gating it") -> str:
    """The id of the run to check; RunFailed (exit code 8) when that run did not complete."""
    from assay.store.run_refs import is_latest

    run = resolve_any(warehouse, run_ref)
    if run["status"] != "complete":
        which = f"the newest run {run['run_id']}" if is_latest(run_ref) else f"run {run['run_id']}"
        raise RunFailed(f"{which} has status {run['status']} ({run['reason']}): {doing} fails. It is stored for "
                        f"inspection (`assay answers show {run['run_id']}`); to check an earlier complete run, "
                        "name it by its id", run_id=run["run_id"], status=run["status"], reason=run["reason"])
    return run["run_id"]


def incomplete_between(warehouse, candidate: dict, baseline_id: str) -> list[dict]:
    """Runs of the candidate's pipeline, judgments and corpus recorded after the baseline and before the
    candidate that did not complete: what `--baseline latest` stepped over."""
    runs = {r["run_id"]: r for r in outcomes(warehouse)}
    base = runs[baseline_id]
    key = lambda r: (r["started_at"], r["run_id"])  # noqa: E731
    return [r for r in sorted(runs.values(), key=key)
            if r["status"] != "complete" and r["pipeline"] == candidate["pipeline"]
            and r["judgments_hash"] == candidate["judgments_hash"] and r["corpus_hash"] == candidate["corpus_hash"]
            and key(base) < key(r) < (candidate["started_at"], candidate["run_id"])]
