"""A sweep's points with their per-question values, as one Ibis expression.

``point_values(warehouse, con, sweep_id, measures)``: ``point, run_id, measure, level, unit, value`` for every
point of the sweep (``sweep_points``) and every measure, read from ``measure_values`` when stored, else computed
by the measure SQL (``assay.analytics.values``). ``assay.runs.sweep.table`` takes each point's means, intervals and
paired tests from these rows.
"""

from __future__ import annotations

from assay.analytics.values import values


def points(con, sweep_id: str):
    t = con.table("sweep_points")
    return t.filter(t.sweep_id == sweep_id)


def point_values(warehouse, con, sweep_id: str, measures, run_ids=None):
    """``run_ids``: the sweep's runs when the caller has them already (saves one query)."""
    p = points(con, sweep_id).select("point", "run_id")
    if run_ids is None:
        run_ids = con.to_pyarrow(p.select("run_id")).column("run_id").to_pylist()
    vals = values(warehouse, con, run_ids, measures)
    return p.join(vals, "run_id").select("point", "run_id", "measure", "level", "unit", "value")
