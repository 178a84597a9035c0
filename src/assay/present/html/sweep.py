"""A sweep as an HTML report: its verdict in words (as the text output opens), the table `assay report --sweep ID`
prints, and the recall-against-context Pareto chart. The figures are ``assay.runs.sweep.table``'s (those of ``--format json``)."""

from __future__ import annotations

from assay.runs import sweep
from assay.present.html import charts
from assay.present.html.run import budget_attr, budget_mark
from assay.present.html.page import attr, document, e, facts, figure, num, summary_section


def _p(v) -> str:
    return "&ndash;" if v is None else ("&lt;0.001" if v < 0.001 else f"{v:.3f}")


def build(result: dict) -> str:
    spec, k = result["spec"], result["spec"]["k"]
    recall, tokens = f"SpanRecall@{k}", f"tokens@{k}"
    points = [{"label": f'{p["point"]}: {p["label"]} {p["pipeline"]}', "tokens": p[tokens], "recall": p[recall],
               "pareto": p["pareto"],
               "role": "best" if p["verdict"] == "best" else ("on the Pareto front" if p["pareto"] else "dominated")}
              for p in result["points"]]
    chart = figure("pareto", charts.pareto(points, k),
                   f"Each point's SpanRecall@{k} against the mean tokens its top {k} results occupy; the line joins "
                   "the Pareto front (no other point has at least its recall with at most its tokens).")
    heads = (["#", "point", "pipeline", "chunks", "tok/result"] + [e(c) for c in result["columns"]]
             + [recall, tokens, "change vs best", "vs best", "p", "p (Holm)", "pareto"])
    trs = []
    for p in result["points"]:
        cells = [str(p["point"]), f'<span class="mono">{e(p["label"])}</span>',
                 f'<span class="mono">{e(p["pipeline"])}</span>', str(p["n_chunks"]),
                 num(p["tokens_per_result"], 0)]
        cells += [f'{num(p["measures"][name]["value"])} <span class="muted">[{num(p["measures"][name]["ci_low"])}, '
                  f'{num(p["measures"][name]["ci_high"])}]</span>' + (budget_mark({**p, "n": result["n_questions"]}) if name.endswith("tok") else "")
                  for name in result["columns"]]
        verdict = {"best": "<b>best</b>", "indistinguishable": "&asymp; best"}.get(p["verdict"], "worse")
        change = "" if p["change"] is None else (f'{p["change"]:+.3f} <span class="muted">[{p["change_ci_low"]:+.3f}, '
                                                 f'{p["change_ci_high"]:+.3f}]</span>')
        cells += [num(p[recall]), num(p[tokens], 0), change, verdict, _p(p["p_value"]), _p(p["p_holm"]),
                  "&#9733;" if p["pareto"] else ""]
        tds = "".join(f"<td>{c}</td>" if i in (1, 2) or i == len(cells) - 4 else f'<td class="num">{c}</td>'
                      for i, c in enumerate(cells))
        trs.append(f'<tr{attr("data-point", p["point"])}{attr("data-run", p["run_id"])}{budget_attr(p)}'
                   f'{" class=best" if p["verdict"] == "best" else ""}>{tds}</tr>')
    th = "".join(f"<th>{h}</th>" for h in heads)
    about = facts([("sweep", f'<span class="mono">{e(result["sweep_id"])}</span>'),
                   ("points", f'{len(result["points"])} ({result["n_questions"]} answerable questions)'),
                   ("context budget", f'{e(spec["budget"])} tokens; k {e(k)}'),
                   ("best point", f'{e(result["best"])}, by {e(result["select"])} (ties: fewer {e(tokens)})')])
    unreached = "".join(f'<p class="warn budget">{e(line)}</p>'
                        for line in sweep.stopped(result) + sweep.unreached(result))  # stopped: only if it did
    skipped = "".join(f'<p class="note">{e(line)}</p>' for line in spec.get("skipped", []))
    note = (f'<p class="note">change vs best: the point\'s {e(result["select"])} minus the best point\'s, over the '
            f'same questions, with the interval that inverts the paired test whose p follows (a score test; '
            f'McNemar\'s for 0/1 values), so it excludes 0 exactly when p &lt; {e(spec["alpha"])}; p (Holm) '
            f'corrects p '
            f'across the {len(result["points"]) - 1} other points; &asymp; best means p (Holm) &ge; '
            f'{e(spec["alpha"])}: statistically indistinguishable. '
            f"&#9733;: on the Pareto front of SpanRecall@{k} against tokens@{k}. "
            "Chunk-level hit rates are left out: they rise with chunk size whatever the context costs.</p>")
    from assay.verdicts import verdict_text

    body = (f'<h1>assay sweep <span class="mono">{e(result["sweep_id"])}</span></h1>'
            + summary_section([verdict_text.sweep(result)["sentence"]]) +  # the text output's first line
            f'<section id="header"><h2>Sweep</h2>{about}{skipped}</section>'
            f'<section id="pareto-section"><h2>Recall against context</h2>{chart}</section>'
            f'<section id="sweep-section"><h2>Points</h2>{note}{unreached}<div class="wide"><table id="sweep"><thead><tr>{th}'
            f'</tr></thead><tbody>{"".join(trs)}</tbody></table></div></section>')
    return document("sweep", f"assay sweep {result['sweep_id']}", body)
