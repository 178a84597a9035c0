"""A report's figures said in plain words: the few sentences that open the HTML report.

Built from the same dicts the page shows (``report.build_report`` for one run, ``report_runs.build_runs_report``
for several), so the text and Markdown reports can open with them too: each function returns a few points,
each one or two plain sentences, no markup (the caller escapes them for its format, one point a line or
a list item). They claim no more than the figures back: a rate comes
with its 95% interval and the number of questions behind it, and a difference between runs is called
distinguishable from noise only when the paired test the page reports (Holm-adjusted) says so.
"""

from __future__ import annotations

# The measure the summary leads with, the first of these the report has: did a passage that answers the
# question reach the top 3 (what a prompt built from the top results would hold)?
HEADLINES = (("Success@3", "chunk"), ("Success@3", "doc"), ("Success@10", "chunk"), ("nDCG@10", "chunk"))
LOST = {  # stage_attribution's places, as a reader would say them
    "retrieval": "at retrieval (no first-stage list held one)",
    "fusion": "at fusion (dropped when the lists were merged)",
    "rerank": "at the reranker (cut from its top)",
    "abstained": "to abstention (the run returned nothing)",
    "cutoff": "at the final cut (ranked below the last result kept)",
}
UNITS_DIFFER = (("Success@3", "doc"), ("nDCG@10", "doc"), ("SpanRecall@1000tok", "chunk"))
TESTS = {"mcnemar-exact": "exact McNemar test", "fisher-randomization": "Fisher randomization test",
         "sign-flip": "paired sign-flip (randomization) test"}
MIN_SLICE = 5  # a slice smaller than this is not singled out as the lowest: its interval says almost nothing


def _rate_k(metric: str) -> int | None:
    """k when ``metric`` is a 0/1 measure with a rank cutoff (Success@3: 3), else None."""
    from assay.errors import ConfigError
    from assay.metrics.registry import parse_measure

    try:
        m = parse_measure(metric)
    except ConfigError:  # a name the registry does not know (a user's measure since removed): said as a number
        return None
    return m.cutoff if m.family.interval == "wilson" and m.cutoff is not None and m.budget is None else None


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def _p(v: float) -> str:
    return "p < 0.001" if v < 0.001 else f"p = {v:.3f}"


def _interval(row: dict, rate: bool) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return "no interval"
    if rate:
        return f"95% interval {_pct(row['ci_low'])} to {_pct(row['ci_high'])}"
    return f"95% interval {row['ci_low']:.3f} to {row['ci_high']:.3f}"


def _hits(row: dict) -> int:
    return round(row["value"] * row["n"])


def pick_headline(rows: list[dict], headlines=HEADLINES) -> dict | None:
    """The "all" row of the first of ``headlines`` present; else the first ranking measure's."""
    overall = {(r["metric"], r["level"]): r for r in rows if r.get("slice", "all") == "all" and r["value"] is not None}
    for key in headlines:
        if key in overall:
            return overall[key]
    return next((r for (_, level), r in overall.items() if level in ("chunk", "doc")), None)


def _what(level: str, k: int) -> str:
    if level == "doc":
        return f"a relevant document among their top {k} documents"
    return f"a relevant chunk (one overlapping a gold passage) in their top {k} results"


def run_summary(report: dict) -> list[str]:
    """One run's report (``build_report``'s dict) in a few sentences: the headline rate with its interval, what
    the interval means at this many questions, where the lost questions were lost, how often the run returned
    nothing for a question the corpus cannot answer, and the lowest slice."""
    metrics = report["metrics"]
    head = pick_headline(metrics)
    out = []
    if head is not None:
        k = _rate_k(head["metric"])
        n = head["n"]
        if k is not None:
            said = (f"Of the {n} answerable questions, {_hits(head)} had {_what(head['level'], k)} "
                    f"({_pct(head['value'])}; {_interval(head, True)}).")
            width = f"{100 * (head['ci_high'] - head['ci_low']):.0f} points" if head["ci_low"] is not None else None
        else:
            said = (f"Over the {n} answerable questions, {head['metric']} at {head['level']} level is "
                    f"{head['value']:.3f} ({_interval(head, False)}).")
            width = f"{head['ci_high'] - head['ci_low']:.3f}" if head["ci_low"] is not None else None
        if width:
            said += (f" With {n} questions that interval is {width} wide; to tell whether another run does better, "
                     "compare the two runs question by question (assay report RUN_A RUN_B), not their intervals.")
        out.append(said)
    out += _losses((report.get("attribution") or {}).get("funnel") or {})
    abstain = next((r for r in metrics if r["metric"] == "Abstain" and r.get("slice", "all") == "all"
                    and r["n"]), None)
    if abstain is not None:
        kept = _hits(abstain)
        out.append(f"Of the {abstain['n']} questions the corpus cannot answer, the run returned nothing for {kept} "
                   f"({_pct(abstain['value'])}; {_interval(abstain, True)}); for the other {abstain['n'] - kept} it "
                   "returned passages that a generator could take for an answer.")
    if head is not None:
        out += _lowest_slice(metrics, head)
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


def _lowest_slice(metrics: list[dict], head: dict) -> list[str]:
    rows = [r for r in metrics if r["metric"] == head["metric"] and r["level"] == head["level"]
            and r.get("slice", "all") != "all" and r["value"] is not None and r["n"] >= MIN_SLICE]
    if len(rows) < 2:
        return []
    low = min(rows, key=lambda r: (r["value"], r["slice"]))
    rate = _rate_k(head["metric"]) is not None
    figure = (f"{_hits(low)} of {low['n']} ({_pct(low['value'])}; {_interval(low, True)})" if rate
              else f"{low['value']:.3f} over {low['n']} questions ({_interval(low, False)})")
    return [f"The lowest slice on this measure is {low['slice']}: {figure}; a slice holds fewer questions, so its "
            "interval is wider still."]


def runs_summary(report: dict, intervals: dict | None = None, flips: dict | None = None) -> list[str]:
    """Several runs against the first (``build_runs_report``'s dict) in a few sentences per later run: which run
    is higher on the headline measure, by how much, and whether the paired test the page reports (Holm-adjusted
    over its table) tells the difference from noise. ``intervals``: (run id, measure, level) -> the paired 95%
    interval of the difference; ``flips``: run id -> ``comparison.flips`` against the first run."""
    runs = report["runs"]
    first = runs[0]["run_id"]
    rows = {(r["run_id"], r["metric"], r["level"]): r for r in report["rows"]}
    # runs that rank different units (chunk sizes, whole documents) are compared at document level: a larger
    # chunk overlaps a gold span more often without being better context (the page's warning says so)
    headlines = UNITS_DIFFER if report.get("warning") else HEADLINES
    head = pick_headline([r for r in report["rows"] if r["run_id"] == first], headlines)
    sig = report["significance"]
    tests = {m["metric"]: m.get("test") for m in report.get("measures", [])}
    out = []
    if report.get("warning") and head is not None and head["level"] != "chunk":
        out.append(f"The runs rank different units, so this summary compares them on {head['metric']} at "
                   f"{head['level']} level, which does not favour the larger unit.")
    for i, run in enumerate(runs[1:], start=2):
        rid = run["run_id"]
        if head is not None and (b := rows.get((rid, head["metric"], head["level"]))) and b["delta"] is not None:
            out += _versus(i, rid, first, head, b, (intervals or {}).get((rid, head["metric"], head["level"])),
                           tests.get(head["metric"]), sig)
        f = (flips or {}).get(rid)
        if f is not None:
            on = f"{f['metric']} at {f['level']} level"
            if f["won"] or f["lost"]:
                out.append(f"On {on}, {len(f['won'])} questions went from miss to hit in run {i} and "
                           f"{len(f['lost'])} from hit to miss.")
            else:
                out.append(f"No question went between hit and miss on {on} in run {i}.")
    return out


def _versus(i: int, rid: str, first: str, a: dict, b: dict, paired, test: str | None, sig: dict) -> list[str]:
    """Which run is higher on the headline measure, by how much, and what the paired test says of it."""
    rate = _rate_k(a["metric"]) is not None
    delta = b["delta"]
    verb = "scores higher than" if delta > 0 else "scores lower than" if delta < 0 else "scores the same as"
    shown = (lambda v: _pct(v)) if rate else (lambda v: f"{v:.3f}")
    change = f"{100 * delta:+.1f} points" if rate else f"{delta:+.3f}"
    if paired is not None:
        low, high = paired
        change += (f"; paired 95% interval {100 * low:+.1f} to {100 * high:+.1f} points" if rate
                   else f"; paired 95% interval {low:+.3f} to {high:+.3f}")
    said = (f"Run {i} ({rid}) {verb} run 1 ({first}) on {a['metric']} at {a['level']} level: "
            f"{shown(b['value'])} against {shown(a['value'])} ({change}).")
    if b.get("p_holm") is None:
        return [said + " That measure is not tested across runs, so nothing says whether the difference is real."]
    name = TESTS.get(test or "", "paired test")
    said += (f" The {name} over the {b['n']} questions, question by question, gives {_p(b['p_holm'])} after Holm's "
            f"adjustment over the page's {sig['n_tests']} tests")
    significant = b["p_holm"] < sig["alpha"]
    if significant:
        said += f", below {sig['alpha']}: a difference this large is unlikely to be noise"
    else:
        said += f": with {b['n']} questions this difference cannot be told from noise"
    # The paired interval inverts the same test before any adjustment: it excludes 0 exactly when the unadjusted
    # p is below alpha, so it can only disagree with the Holm-adjusted decision, never with the test itself.
    if paired is not None and (paired[0] > 0 or paired[1] < 0) and not significant:
        raw = b.get("p_value")
        said += (f" (alone, this test gives {_p(raw)} and its paired interval excludes 0; it is the adjustment for "
                 f"the page's {sig['n_tests']} tests that leaves the difference unsettled)" if raw is not None else
                 f" (its paired interval excludes 0 before the adjustment for the page's {sig['n_tests']} tests, "
                 "which leaves the difference unsettled)")
    return [said + "."]
