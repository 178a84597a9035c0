"""Two runs' per-question values joined on the question, per slice, as one Ibis expression.

``paired(warehouse, con, run_a, run_b, measures, slices)``: one row per (measure, level, slice, unit) that both
runs scored: ``measure, level, slice, unit, a, b``. Only question measures pair (a citation or a claim is not the
same item in two runs). Slices: ``all``, and with ``slices=True`` also ``field=label`` for each field of
``SLICE_FIELDS``, labels from run A's questions (``eval_questions``). Values come from ``measure_values`` when
stored, else from the measure SQL (``assay.analytics.values``). The paired score tests read these rows (``assay.verdicts.comparison.paired_tests``).
"""

from __future__ import annotations

from assay.analytics.values import values
from assay.measures.compute import SLICE_FIELDS


def paired(warehouse, con, run_a: str, run_b: str, measures, slices: bool):
    import ibis

    measures = [m for m in measures if m.family.unit == "question"]
    vals = values(warehouse, con, [run_a, run_b], measures)
    a = vals.filter(vals.run_id == run_a).select("measure", "level", "unit", a="value")
    b = vals.filter(vals.run_id == run_b).select("measure", "level", "unit", b="value")
    pairs = a.join(b, ["measure", "level", "unit"])
    every = pairs.mutate(slice=ibis.literal("all")).select("measure", "level", "slice", "unit", "a", "b")
    if not slices:
        return every
    q = con.table("eval_questions")
    q = q.filter(q.run_id == run_a).select("query_id", *SLICE_FIELDS)
    labelled = pairs.join(q, pairs.unit == q.query_id)
    parts = [every] + [
        labelled.mutate(slice=ibis.literal(f"{field}=") + labelled[field].fill_null("None"))
        .select("measure", "level", "slice", "unit", "a", "b")
        for field in SLICE_FIELDS]
    return ibis.union(*parts)
