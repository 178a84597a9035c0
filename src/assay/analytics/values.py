"""Per-question values as one Ibis table: ``measure_values`` where stored, the measure SQL for the rest.

Columns: ``run_id, measure, level, query_id, unit, value``. ``unit`` is the query id for question measures and
``query_id|claim|cite`` for citation and claim measures (as in ``measure_values``).

A (run, measure) pair with rows in ``measure_values`` at the stage asked reads them (the default measures are
stored with every run). A pair with none is computed with ``assay.measures.compute.per_query`` (a measure added
later, an older run, another stage) and joins the expression as an in-memory table, so callers see one table
whatever was stored. A measure that has no value for a run (no answer stage) is computed too and gives no rows.
"""

from __future__ import annotations

from assay.measures.compute import per_query, question_labels, question_of

COLUMNS = ("run_id", "measure", "level", "query_id", "unit", "value")


def _schema():
    import ibis

    return ibis.schema({"run_id": "string", "measure": "string", "level": "string", "query_id": "string",
                        "unit": "string", "value": "float64"})


def stored(con, run_ids, names, stage: str = "final") -> set[tuple[str, str]]:
    """The (run_id, measure) pairs ``measure_values`` holds at ``stage``; none where the table is missing."""
    try:
        table = con.table("measure_values")
    except Exception:  # a warehouse or lake from before migration 011
        return set()
    pairs = (table.filter(table.run_id.isin(list(run_ids)), table.measure.isin(list(names)), table.stage == stage)
             .select("run_id", "measure").distinct())
    pairs = con.to_pyarrow(pairs)
    return set(zip(pairs.column("run_id").to_pylist(), pairs.column("measure").to_pylist()))


def values(warehouse, con, run_ids, measures, stage: str = "final"):
    """The per-question values of ``measures`` for ``run_ids`` as one Ibis table (see the module docstring).

    ``warehouse`` computes what is not stored (its read interface: ``query``, ``con.execute``); ``con`` is the
    Ibis backend over the same data (``assay.analytics.connect``)."""
    import ibis

    run_ids, measures = list(dict.fromkeys(run_ids)), list(dict.fromkeys(measures))
    names = [m.name for m in measures]
    have = stored(con, run_ids, names, stage) if run_ids and names else set()
    computed = {c: [] for c in COLUMNS}
    for run_id in run_ids:
        questions = None  # the run's question ids, read once a value is computed
        for measure in measures:
            if (run_id, measure.name) in have:
                continue
            for (unit, level), value in per_query(warehouse, run_id, measure, stage).items():
                questions = set(question_labels(warehouse, run_id)) if questions is None else questions
                query_id = question_of(unit, questions)
                for column, item in zip(COLUMNS, (run_id, measure.name, level, query_id, unit, value)):
                    computed[column].append(item)
    parts = []
    if have:
        table = con.table("measure_values")
        parts.append(table.filter(table.run_id.isin(run_ids), table.measure.isin(names), table.stage == stage)
                     .select(*COLUMNS).cast(_schema()))
    if computed["run_id"] or not parts:
        parts.append(ibis.memtable(computed, schema=_schema()))
    return parts[0] if len(parts) == 1 else parts[0].union(parts[1])


def fetch(con, expr, order_by=()) -> list[dict]:
    """An expression's rows as dicts (through Arrow, on ``con``), sorted in Python by ``order_by``: string order
    as Python's ``sorted`` has it, whatever the engine's collation."""
    rows = con.to_pyarrow(expr).to_pylist()
    if order_by:
        rows.sort(key=lambda r: tuple(r[c] for c in order_by))
    return rows
