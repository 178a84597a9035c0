"""A measure across a pipeline's runs over time, per slice, as Ibis expressions.

``runs(con, pipeline)``: the pipeline's complete runs, oldest first (``started_at``, then ``run_id``).
``series(warehouse, con, run_ids, measure, level, slice_)``: one row per (run, unit) in the slice:
``run_id, unit, value``. The slice is ``all`` or ``field=value`` for a field of ``SLICE_FIELDS``; a question's
labels are those of ``eval_questions`` for its run. Values come from ``measure_values`` when stored, else from
the measure SQL (``assay.analytics.values``).
"""

from __future__ import annotations

from assay.analytics.values import fetch, values
from assay.measures.compute import SLICE_FIELDS

RUN_COLUMNS = ("run_id", "started_at", "judgments_hash", "corpus_hash", "seed", "kind", "sweep_id", "stats")


def runs(con, pipeline: str):
    """The pipeline's complete runs with their identities (order them with ``ordered_runs``)."""
    t = con.table("complete_runs")
    return t.filter(t.pipeline == pipeline).select(*RUN_COLUMNS)


def ordered_runs(con, pipeline: str) -> list[dict]:
    """The rows sql/analytics/pipeline_runs.sql gives on DuckDB: the ablation a run was a rung of is read from its
    stats JSON here, in Python, as Spark and DuckDB spell JSON paths differently."""
    import json

    rows = fetch(con, runs(con, pipeline), order_by=("started_at", "run_id"))
    for row in rows:
        stats = row.pop("stats")
        stats = stats if isinstance(stats, dict) else json.loads(stats) if stats else {}
        row["ablation_id"] = (stats.get("ablation") or {}).get("ablation_id")
    return rows


def in_slice(questions, slice_: str):
    """A filter of ``questions`` (eval_questions) to a slice; ``None`` for a slice no question can be in."""
    if slice_ == "all":
        return questions
    field, sep, label = slice_.partition("=")
    if not sep or field not in SLICE_FIELDS:
        return None
    column = questions[field]
    # Python names a missing label 'None' (f"{field}={None}"), so that slice holds both
    return questions.filter(column.isnull() | (column == label) if label == "None" else column == label)


def series(warehouse, con, run_ids, measure, level: str, slice_: str = "all"):
    """``run_id, unit, value`` of ``measure`` at ``level`` for each run's questions in ``slice_`` (an Ibis table),
    or ``None`` when the slice names no field."""
    vals = values(warehouse, con, run_ids, [measure])
    vals = vals.filter(vals.level == level)
    if slice_ == "all":
        return vals.select("run_id", "unit", "value")
    q = con.table("eval_questions")
    q = in_slice(q.filter(q.run_id.isin(list(run_ids))).select("run_id", "query_id", *SLICE_FIELDS), slice_)
    if q is None:
        return None
    return vals.join(q, ["run_id", "query_id"]).select("run_id", "unit", "value")
