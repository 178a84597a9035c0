"""A history's and a comparison's per-question values read with plain SQL on a DuckDB connection: the rows the
Ibis expressions (``history.series``, ``pairing.paired``) give, without Ibis.

A warehouse, or a lake read with DuckDB, holds a DuckDB connection (``con``); reading through it directly skips
importing Ibis, which imports pandas and alone costs more CPU than comparing two 1,000-question runs. Any other
source (a lake on Spark) goes through the Ibis expressions. tests/analytics checks that both give the same rows.

``pipeline_values(warehouse, pipeline, measure, level, slice_)``: ``(runs, {run_id: values})``, the pipeline's
complete runs (oldest first, as ``history.ordered_runs``) and each run's values in the slice, in unit order.
``run_values(warehouse, run_ids, measures)``: ``{(run_id, measure, level): [(unit, value)]}``, the rows
``sweeps.point_values`` gives for the runs of a sweep's points.
``paired_values(warehouse, run_a, run_b, measures, slices)``: ``{(measure, level, slice): [(unit, a, b)]}`` in unit
order, the pairs ``pairing.paired`` gives. Both read ``measure_values`` where a run holds the measure at the
stage, and compute the rest with the measure SQL (``assay.measures.compute.per_query``), as ``values.values``.
"""

from __future__ import annotations

from assay.measures.compute import SLICE_FIELDS, per_query, question_labels, question_of, stored_values

STAGE = "final"


def holds_duckdb(source) -> bool:
    """Whether ``source`` reads through a DuckDB connection of its own (a warehouse, a DuckDB lake)."""
    import duckdb

    return isinstance(getattr(source, "con", None), duckdb.DuckDBPyConnection) and hasattr(source, "query")


def pipeline_runs(warehouse, pipeline: str) -> list[dict]:
    cols, rows = warehouse.query("analytics/pipeline_runs", pipeline=pipeline)
    return sorted((dict(zip(cols, r)) for r in rows), key=lambda r: (r["started_at"], r["run_id"]))


def pipeline_values(warehouse, pipeline: str, measure, level: str, slice_: str = "all", only=None):
    """See the module docstring; ``{}`` of values for a slice that names no field. ``only``: these runs' values
    alone (the others are neither read nor computed)."""
    runs = pipeline_runs(warehouse, pipeline)
    if only is not None:
        only = set(only)
        runs = [r for r in runs if r["run_id"] in only]
    field, sep, label = slice_.partition("=")
    if slice_ != "all" and (not sep or field not in SLICE_FIELDS):
        return runs, {}
    params = {"pipeline": pipeline, "measure": measure.name, "stage": STAGE, "level": level}
    if slice_ == "all":
        _, rows = warehouse.query("analytics/pipeline_values", **params)
    else:
        _, rows = warehouse.query("analytics/pipeline_slice_values", **params, field=field, label=label)
    wanted = {r["run_id"] for r in runs}
    by_run = {run_id: values for run_id, values in rows if run_id in wanted}
    _, stored = warehouse.query("analytics/stored_runs", pipeline=pipeline, measure=measure.name, stage=STAGE)
    stored = {r for r, in stored}
    for run in runs:
        if run["run_id"] in stored:
            continue
        labels = question_labels(warehouse, run["run_id"]) if slice_ != "all" else None
        by_run[run["run_id"]] = [value for (unit, lvl), value in sorted(
            per_query(warehouse, run["run_id"], measure, STAGE).items())
            if lvl == level and (labels is None or _in_slice(_labels_of(unit, labels), field, label))]
    return runs, {run_id: values for run_id, values in by_run.items() if values}


def _labels_of(unit: str, labels: dict) -> dict | None:
    """The labels of the question a unit belongs to (its id may hold '|'), None when it is none of the run's."""
    try:
        return labels[question_of(unit, labels)]
    except KeyError:
        return None


def _in_slice(labels: dict | None, field: str, label: str) -> bool:
    """Whether a question with these labels (None: not among the run's questions) is in ``field=label``."""
    if labels is None:
        return False
    return labels[field] in (None, "None") if label == "None" else labels[field] == label


def paired_values(warehouse, run_a: str, run_b: str, measures, slices: bool) -> dict[tuple, list]:
    """See the module docstring. Only question measures pair."""
    measures = [m for m in measures if m.family.unit == "question"]
    stored = {run: stored_values(warehouse, run, STAGE) for run in (run_a, run_b)}

    def values(run: str, measure) -> dict:
        return stored[run].get(measure.name) or per_query(warehouse, run, measure, STAGE)

    labels = question_labels(warehouse, run_a) if slices else {}
    pairs: dict[tuple, list] = {}
    for measure in measures:
        va, vb = values(run_a, measure), values(run_b, measure)
        for (unit, level), a in sorted(va.items()):
            if (unit, level) not in vb:
                continue
            item = (unit, a, vb[(unit, level)])
            pairs.setdefault((measure.name, level, "all"), []).append(item)
            if unit in labels:
                for field in SLICE_FIELDS:
                    name = f"{field}={'None' if labels[unit][field] is None else labels[unit][field]}"
                    pairs.setdefault((measure.name, level, name), []).append(item)
    return pairs


def run_values(warehouse, run_ids, measures) -> dict[tuple[str, str, str], list[tuple[str, float]]]:
    """See the module docstring; each list in unit order."""
    out: dict[tuple[str, str, str], list[tuple[str, float]]] = {}
    for run in dict.fromkeys(run_ids):
        stored = stored_values(warehouse, run, STAGE)
        for measure in dict.fromkeys(measures):
            for (unit, level), value in sorted((stored.get(measure.name) or
                                                per_query(warehouse, run, measure, STAGE)).items()):
                out.setdefault((run, measure.name, level), []).append((unit, value))
    return out
