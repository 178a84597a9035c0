"""Stage attribution rolled up per run, as Ibis expressions over the ``stage_attribution`` view.

``loss_funnel(con, run_ids)``: ``run_id, step, lost_at, n``: how many answerable questions each run lost where
(``retrieval``, ``fusion``, ``rerank``, ``abstained``, ``cutoff``, or ``found``), ``step`` giving the pipeline
order; only the places where a run lost a question have a row (as the ``loss_funnel`` view).
``fusion_effect(con, run_ids)``: ``run_id, rescued, lost`` for each run with a fusion stage: questions fusion
kept whose gold one input list missed, and questions an input list found that fusion dropped (as the
``fusion_effect`` view).
``run_ids=None``: every run.
"""

from __future__ import annotations

STEPS = ("retrieval", "fusion", "rerank", "abstained", "cutoff", "found")


def _attribution(con, run_ids):
    t = con.table("stage_attribution")
    return t if run_ids is None else t.filter(t.run_id.isin(list(run_ids)))


def loss_funnel(con, run_ids=None):
    import ibis

    t = _attribution(con, run_ids)
    step = ibis.cases(*((t.lost_at == name, i) for i, name in enumerate(STEPS, 1)), else_=len(STEPS))
    return (t.group_by("run_id", "lost_at").agg(n=t.count(), step=step.min())
            .select("run_id", "step", "lost_at", "n").order_by("run_id", "step"))


def fusion_effect(con, run_ids=None):
    t = _attribution(con, run_ids)
    t = t.filter(t.in_fusion.notnull())
    missing_input = (t.in_bm25 == 0) | (t.in_dense == 0)
    found_input = (t.in_bm25 == 1) | (t.in_dense == 1)
    rescued = ((t.in_fusion == 1) & missing_input.fill_null(False)).ifelse(1, 0)
    lost = ((t.in_fusion == 0) & found_input.fill_null(False)).ifelse(1, 0)
    return t.group_by("run_id").agg(rescued=rescued.sum(), lost=lost.sum()).order_by("run_id")
