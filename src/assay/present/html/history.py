"""`assay history` as an HTML report: a measure across a pipeline's runs with its 95% interval band and the
run where a lasting drop began. The figures are ``assay.verdicts.regression.history``'s (those of ``--format json``)."""

from __future__ import annotations

from assay.present.html import charts
from assay.present.html.page import attr, document, e, facts, figure, num
from assay.present.html.run import budget_attr, budget_mark, budget_warnings


def build(h: dict) -> str:
    points = h["points"]
    drop = h["lasting_drop"]
    drop_at = next((i for i, p in enumerate(points) if drop and p["run_id"] == drop["run_id"]), None)
    label = f'{h["metric"]} ({h["level"]})'
    chart_rows = [{"i": i, "run": f"{i + 1}: {p['run_id']}", "value": p["value"], "ci_low": p["ci_low"],
                   "ci_high": p["ci_high"]} for i, p in enumerate(points)]
    chart = figure("history", charts.history(chart_rows, label, drop_at),
                   f"{label} of each run of pipeline {h['pipeline']}, oldest first: the line is the mean over "
                   "questions, the band its 95% interval; a dashed red line marks where a lasting drop began.") \
        if points else '<p class="note">No run has values for this measure in this slice.</p>'
    if drop:
        verdict = (f'A lasting drop began at run <span class="mono">{e(drop["run_id"])}</span> ({num(drop["value"])}; '
                   f'best before it {num(drop["prior_best"])} at <span class="mono">{e(drop["prior_best_run"])}</span>): '
                   f'no later run came back within {e(h["tolerance"])}.')
    else:
        verdict = f'No lasting drop (tolerance {e(h["tolerance"])}).'
    if h.get("drop_test"):  # the significance test of the candidate drop, as the table output says it
        from assay.verdicts.regression import _test_sentence

        verdict += f' <span class="note">{e(_test_sentence(h["drop_test"]))}.</span>'
    excluded = h.get("excluded") or {}
    if excluded:
        verdict += (f' <span class="note">Not shown: {e(", ".join(f"{n} {k}" for k, n in excluded.items()))} run(s) '
                    f'of this pipeline (<span class="mono">--include {e(",".join(excluded))}</span> shows them).</span>')
    groups = (f'<p class="warn">These runs span {h["comparable_groups"]} different judgment/corpus sets; the drop '
              "search uses only the runs comparable with the newest one.</p>") if h["comparable_groups"] > 1 else ""
    incomplete = "".join(f'<p class="note">run <span class="mono">{e(r["run_id"])}</span> has status '
                         f'{e(r["status"])} ({e(r["reason"])}): no metrics, not shown.</p>' for r in h["incomplete"])
    trs = "".join(
        f'<tr{attr("data-run", p["run_id"])}{budget_attr(p)}{" class=drop" if i == drop_at else ""}>'
        f'<td class="num">{i + 1}</td><td class="mono">{e(p["run_id"])}</td><td>{e(p["started_at"])}</td>'
        f'<td class="value">{num(p["value"])}{budget_mark(p)}</td>'
        f'<td class="ci-low">{num(p["ci_low"])}</td><td class="ci-high">{num(p["ci_high"])}</td>'
        f'<td class="num">{p["n"]}</td><td>{"lasting drop began" if i == drop_at else ""}</td></tr>'
        for i, p in enumerate(points))
    short = budget_warnings([{**p, "metric": h["metric"]} for p in points], lambda p: f"run {p['run_id']}: ")
    about = facts([("pipeline", f'<span class="mono">{e(h["pipeline"])}</span>'),
                   ("measure", f'<span class="mono">{e(h["metric"])}</span>, {e(h["level"])} level'),
                   ("slice", f'<span class="mono">{e(h["slice"])}</span>'), ("runs", str(len(points)))])
    body = (f'<h1>assay history: <span class="mono">{e(h["metric"])}</span> of '
            f'<span class="mono">{e(h["pipeline"])}</span></h1>'
            f'<section id="header"><h2>History</h2>{about}{groups}{incomplete}{short}<p>{verdict}</p></section>'
            f'<section id="history-section"><h2>Over time</h2>{chart}<div class="wide"><table id="history">'
            "<thead><tr><th class=num>#</th><th>run</th><th>started</th><th class=num>value</th>"
            "<th class=num>95% low</th><th class=num>95% high</th><th class=num>n</th><th></th></tr></thead>"
            f"<tbody>{trs}</tbody></table></div></section>")
    return document("history", f"assay history {h['metric']} {h['pipeline']}", body)
