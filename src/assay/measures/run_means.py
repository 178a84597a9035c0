"""Measures over every run of a lake (or a warehouse): one mean per run, measure and level.

Values a run stored as it was written (``measure_values``: the default measures, and any `assay measures compute`
added) are read for every run and measure in one query; only the (run, measure) pairs with no stored value are
computed by the measure SQL, on a Spark lake with the views they share computed once for all runs
(``SparkLake.cache_views``). A stored value is the value the SQL gives (assay.measures.values), and a mean sums its
values in key order either way, so both paths give the same figure to the bit.
"""

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
    stored = stored_final_values(reader, measures, pipeline)
    missing = [(run_id, m) for run_id, _ in runs for m in measures if (run_id, m.name) not in stored]
    if len({run_id for run_id, _ in missing}) > 1 and hasattr(reader, "cache_views"):
        reader.cache_views()  # Spark: the views every measure joins, computed once for all these runs
    rows = []
    for run_id, run_pipeline in runs:
        for measure in measures:
            values = stored.get((run_id, measure.name))
            if values is None:
                values = per_query(reader, run_id, measure)
            for level in measure.levels:
                vals = [v for (_, lvl), v in sorted(values.items()) if lvl == level]
                rows.append({"run_id": run_id, "pipeline": run_pipeline, "metric": measure.name, "level": level,
                             "value": sum(vals) / len(vals) if vals else None, "n": len(vals)})
    return rows


def stored_final_values(reader, measures, pipeline: str | None = None) -> dict[tuple[str, str], dict]:
    """{(run_id, measure name): {(unit, level): value}} of the final stage, as stored, for the complete runs (of
    ``pipeline``) and ``measures``: one query. A pair with no stored value is absent."""
    names = sorted({m.name for m in measures})
    if not names:
        return {}
    sql = ("SELECT v.run_id, v.measure, v.unit, v.level, v.value FROM measure_values v "
           "JOIN complete_runs r ON r.run_id = v.run_id "
           f"WHERE v.stage = 'final' AND v.measure IN ({', '.join('?' for _ in names)})")
    params: list = list(names)
    if pipeline is not None:
        sql += " AND r.pipeline = ?"
        params.append(pipeline)
    found: dict[tuple[str, str], dict] = {}
    for run_id, measure, unit, level, value in reader.con.execute(sql, params).fetchall():
        found.setdefault((run_id, measure), {})[(unit, level)] = float(value)
    return found
