"""A report's figures said in plain words: the few sentences that open the HTML report.

Built from the same dicts the page shows (``report.build_report`` for one run, ``report_runs.build_runs_report``
for several): the first point is the verdict in words those dicts carry (assay.verdicts.verdict_text, the sentences the
text and Markdown reports open with), so the page and the text say the same thing; the rest add where questions
were lost and how the run treated the questions the corpus cannot answer. Each function returns a few points,
no markup (the caller escapes them). They claim no more than the figures back: a rate comes with its 95%
interval and the number of questions behind it.
"""

from __future__ import annotations

from assay.verdicts.verdict_text import HEADLINES, hits as _hits, interval_words as _interval, pct as _pct, pick

LOST = {  # stage_attribution's places, as a reader would say them
    "retrieval": "at retrieval (no first-stage list held one)",
    "fusion": "at fusion (dropped when the lists were merged)",
    "rerank": "at the reranker (cut from its top)",
    "abstained": "to abstention (the run returned nothing)",
    "cutoff": "at the final cut (ranked below the last result kept)",
}


def pick_headline(rows: list[dict], headlines=HEADLINES) -> dict | None:
    """The "all" row of the first of ``headlines`` present; else the first ranking measure's (verdict_text.pick)."""
    return pick([r for r in rows if r["value"] is not None], headlines=headlines)


def run_summary(report: dict) -> list[str]:
    """One run's report (``build_report``'s dict) in a few sentences: its verdict in words (the headline figure
    with its interval, the lowest slice and the minimum detectable change: assay.verdicts.verdict_text, the sentence the
    text report opens with), where the lost questions were lost, and how often the run returned nothing for a
    question the corpus cannot answer."""
    from assay.verdicts import verdict_text

    metrics = report["metrics"]
    verdict = report.get("verdict")
    if verdict is None and "verdict" not in report:  # a report dict built by hand: the verdict without its MDC
        verdict = verdict_text.run(metrics, pick_headline(metrics), None)
    out = [verdict["sentence"]] if verdict else []
    out += _losses((report.get("attribution") or {}).get("funnel") or {})
    abstain = next((r for r in metrics if r["metric"] == "Abstain" and r.get("slice", "all") == "all"
                    and r["n"]), None)
    if abstain is not None:
        kept = _hits(abstain)
        out.append(f"Of the {abstain['n']} questions the corpus cannot answer, the run returned nothing for {kept} "
                   f"({_pct(abstain['value'])}; {_interval(abstain, True)}); for the other {abstain['n'] - kept} it "
                   "returned passages that a generator could take for an answer.")
    return out


def _losses(funnel: dict) -> list[str]:
    total = sum(funnel.values())
    if not total:
        return []
    lost = {k: v for k, v in funnel.items() if k != "found" and v}
    if not lost:
        return [f"Every one of the {total} answerable questions had a relevant chunk somewhere in the run's final "
                "list: none was lost along the pipeline."]
    parts = ", ".join(f"{v} {LOST.get(k, 'at ' + k)}" for k, v in lost.items())
    return [f"{sum(lost.values())} of the {total} answerable questions had no relevant chunk anywhere in the run's "
            f"final list. Lost questions: {parts}."]


def runs_summary(report: dict, flips: dict | None = None) -> list[str]:
    """Several runs against the first (``build_runs_report``'s dict) in a few sentences per later run: its verdict
    in words on the headline measure (``report["verdicts"]``, the sentences the text report opens with:
    assay.verdicts.verdict_text.comparison), and the questions that flipped. ``flips``: run id -> ``comparison.flips``
    against the first run."""
    verdicts = {v["run_id"]: v for v in report.get("verdicts", [])}
    out = []
    head = next(iter(verdicts.values()), None)
    if report.get("warning") and head is not None and head["level"] != "chunk":
        out.append(f"The runs rank different units, so this summary compares them on {head['measure']} at "
                   f"{head['level']} level, which does not favour the larger unit.")
    for i, run in enumerate(report["runs"][1:], start=2):
        rid = run["run_id"]
        if rid in verdicts:
            out.append(verdicts[rid]["sentence"])
        f = (flips or {}).get(rid)
        if f is not None:
            on = f"{f['metric']} at {f['level']} level"
            if f["won"] or f["lost"]:
                out.append(f"On {on}, {len(f['won'])} questions went from miss to hit in run {i} and "
                           f"{len(f['lost'])} from hit to miss.")
            else:
                out.append(f"No question went between hit and miss on {on} in run {i}.")
    return out
