"""Measures over every run of a lake (or a warehouse): one mean per run, measure and level."""

from __future__ import annotations

from assay.measures.compute import per_query


def run_means(reader, measures, pipeline: str | None = None) -> list[dict]:
    """For every complete run (oldest first; only ``pipeline``'s when given), each measure's mean over the
    questions it covers, per level. A level with no question has value None (not computed, never 0)."""
    sql = "SELECT run_id, pipeline FROM complete_runs"
    params: list = []
    if pipeline is not None:
        sql += " WHERE pipeline = ?"
        params.append(pipeline)
    runs = reader.con.execute(sql + " ORDER BY started_at, run_id", params).fetchall()
    if len(runs) > 1 and hasattr(reader, "cache_views"):
        reader.cache_views()  # Spark: the views every measure joins, computed once for all these runs
    rows = []
    for run_id, run_pipeline in runs:
        for measure in measures:
            values = per_query(reader, run_id, measure)
            for level in measure.levels:
                vals = [v for (_, lvl), v in values.items() if lvl == level]
                rows.append({"run_id": run_id, "pipeline": run_pipeline, "metric": measure.name, "level": level,
                             "value": sum(vals) / len(vals) if vals else None, "n": len(vals)})
    return rows
