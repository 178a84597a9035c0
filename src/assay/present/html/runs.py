"""Several runs in one HTML report: a summary in words, each run's values, its paired difference from the
first run with an interval and a Holm-adjusted p-value, a chart of the differences, the differences by slice,
and the questions that flipped with both rankings side by side.

The table is ``assay.present.report_runs.build_runs_report`` (the figures of ``assay report A B C --format json``).
Its rows carry each run's own interval; the chart draws the paired interval of each difference, and the slice
breakdown each slice's, from ``comparison.paired_rows`` with the first run's seed, as ``assay compare`` reports
them (its p-values Holm-adjusted within each slice). Flips are ``comparison.flips`` on Success@3 at document
level, as ``assay compare`` lists them by default.
"""

from __future__ import annotations

from assay.present.html import charts
from assay.present.html.drill import DEPTH, gold_block, ranking
from assay.present.html.page import anchor, attr, document, e, figure, num, summary_section, table
from assay.present.html.summary import runs_summary
from assay.present.html.run import budget_attr, budget_mark, budget_warnings
from assay.measures.registry import DEFAULT_MEASURES

FLIP_MEASURE, FLIP_LEVEL = "Success@3", "doc"
# the measures `assay compare` breaks down by slice (comparison.render), in its order
COMPARE_SLICES = (("Success@3", "doc"), ("Success@10", "chunk"), ("nDCG@10", "chunk"))


def _p(v) -> str:
    return "&ndash;" if v is None else ("&lt;0.001" if v < 0.001 else f"{v:.3f}")


def build(source, run_ids: list[str], measures=DEFAULT_MEASURES, level: str | None = None, depth: int = DEPTH) -> str:
    from assay.verdicts.comparison import flips, paired_rows, run_identity
    from assay.measures.registry import parse_measure
    from assay.present.report_runs import build_runs_report

    report = build_runs_report(source, run_ids, measures, level)
    ids = [r["run_id"] for r in report["runs"]]
    first = run_identity(source, ids[0])
    others = [run_identity(source, rid) for rid in ids[1:]]
    # every slice, Holm within each as `assay compare` adjusts them; the "all" rows are the same floats
    # as without slices (each interval and test is computed on its own pairs)
    tested = {o["run_id"]: paired_rows(source, first, o, measures, slices=True) for o in others}
    paired = {(rid, t["metric"], t["level"]): t for rid, rows in tested.items() for t in rows if t["slice"] == "all"}
    flipped = [flips(source, first, o, parse_measure(FLIP_MEASURE), FLIP_LEVEL) for o in others]
    points = runs_summary(report, dict(zip(ids[1:], flipped)))
    body = [f"<h1>assay report: {len(ids)} runs</h1>", summary_section(points), _runs(report),
            _deltas(report, paired), _slices(ids, tested, report), _flips(source, ids, flipped, depth)]
    return document("runs", f"assay report: {len(ids)} runs", "".join(body))


def slice_columns(rows: list[dict]) -> list[tuple[str, str]]:
    """The measures the slice breakdown shows: those `assay compare` prints by slice, else (a report of other
    measures) the first three measure-and-level pairs tested."""
    present = list(dict.fromkeys((r["metric"], r["level"]) for r in rows if r["slice"] == "all"))
    chosen = [c for c in COMPARE_SLICES if c in present]
    return chosen or present[:3]


def _slices(ids: list[str], tested: dict[str, list[dict]], report: dict) -> str:
    parts = []
    for n, rid in enumerate(ids[1:], start=2):
        rows = tested[rid]
        columns = slice_columns(rows)
        sliced = [r for r in rows if r["slice"] != "all" and (r["metric"], r["level"]) in columns]  # compare's order
        if not sliced:
            continue
        alpha = report["significance"]["alpha"]
        chart_rows = [{"measure": f'{r["metric"]} ({r["level"]})', "slice": r["slice"], "delta": r["delta"],
                       "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                       "significant": "yes" if r["p_holm"] < alpha else "no"} for r in sliced]
        chart = figure(f"slice-deltas-{n}", charts.slice_deltas(chart_rows, [f"{m} ({lvl})" for m, lvl in columns]),
                       f"Run {n} minus run 1 in each slice (a drop is negative), paired over the slice's questions, "
                       f"with the paired 95% interval that inverts the test; red: p (Holm, within the slice) < "
                       f"{alpha}.")
        body = [[f'<span class="mono">{e(r["slice"])}</span>', f'<span class="mono">{e(r["metric"])}</span>',
                 e(r["level"]), str(r["n"]), num(r["a"]), num(r["b"]), f'{r["delta"]:+.3f}',
                 f'[{r["ci_low"]:+.3f}, {r["ci_high"]:+.3f}]', _p(r["p_holm"])] for r in sliced]
        attrs = [f'{attr("data-slice", r["slice"])}{attr("data-measure", r["metric"])}{attr("data-level", r["level"])}'
                 f'{attr("data-run", rid)}{" class=significant" if r["p_holm"] < alpha else ""}' for r in sliced]
        parts.append(f'<h3>run 1 <span class="mono">{e(ids[0])}</span> &rarr; run {n} <span class="mono">{e(rid)}</span>'
                     f"</h3>{chart}"
                     + table(["slice", "measure", "level", "n", "run 1", f"run {n}", "&Delta;", "&Delta; 95% (paired)",
                              "p (Holm)"], body, attrs=f' class="slice-deltas"{attr("data-run", rid)}', row_attrs=attrs,
                             numeric={3, 4, 5, 6, 7, 8}))
    if not parts:
        return ""
    return ('<section id="slices"><h2>By slice</h2><p class="note">The differences of the headline measures within '
            "each category, form and hard class, as <code>assay compare</code> prints them: paired over the slice's "
            "questions; p (Holm): adjusted within the slice over all its tests. Slices hold few questions: read the "
            "interval before the difference.</p>" + "".join(parts) + "</section>")


def _runs(report: dict) -> str:
    rows = [[str(i), f'<span class="mono">{e(r["run_id"])}</span>', f'<span class="mono">{e(r["pipeline"])}</span>',
             f'<span class="mono">{e(r["chunker"])}</span>', str(r["n_questions"]), e(r["started_at"]), e(r["unit"])]
            for i, r in enumerate(report["runs"], start=1)]
    warn = f'<p class="warn">{e(report["warning"])}</p>' if report["warning"] else ""
    return (f'<section id="header"><h2>Runs</h2>{warn}'
            + table(["#", "run", "pipeline", "chunker", "questions", "started", "ranks"], rows, numeric={0, 4})
            + '<p class="note">Run 1 is the baseline: every other run is tested against it, question by question.'
              "</p></section>")


def _significant(row: dict, alpha: float) -> bool:
    return row["p_holm"] is not None and row["p_holm"] < alpha


def _deltas(report: dict, paired: dict) -> str:
    sig = report["significance"]
    ids = [r["run_id"] for r in report["runs"]]
    number = {rid: i for i, rid in enumerate(ids, start=1)}
    untested = {m["metric"]: m["untested"] for m in report["measures"]}
    trs, chart_rows = [], []
    for r in report["rows"]:
        t = paired.get((r["run_id"], r["metric"], r["level"]))
        low, high = (t["ci_low"], t["ci_high"]) if t else (None, None)
        mark = ""
        if _significant(r, sig["alpha"]):
            mark = "higher" if r["delta"] > 0 else "lower"
        delta = "" if r["delta"] is None else f"{r['delta']:+.3f}"
        note = e(untested[r["metric"]]) if untested.get(r["metric"]) and r["delta"] is not None else ""
        trs.append(
            f'<tr{attr("data-measure", r["metric"])}{attr("data-level", r["level"])}{attr("data-run", r["run_id"])}'
            f'{" class=significant" if mark else ""}{budget_attr(r)}><td class="mono">{e(r["metric"])}{budget_mark(r)}'
            f'</td><td>{e(r["level"])}</td>'
            f'<td class="num">{number[r["run_id"]]}</td><td class="value">{num(r["value"])}</td>'
            f'<td class="ci-low">{num(r["ci_low"])}</td><td class="ci-high">{num(r["ci_high"])}</td>'
            f'<td class="num">{r["n"]}</td><td class="num delta">{delta}</td>'
            f'<td class="num delta-low">{"" if low is None else f"{low:+.3f}"}</td>'
            f'<td class="num delta-high">{"" if high is None else f"{high:+.3f}"}</td>'
            f'<td class="num">{_p(r["p_value"])}</td><td class="num p-holm">{_p(r["p_holm"])}</td>'
            f"<td>{mark}{note}</td></tr>")
        if r["delta"] is not None and t is not None:
            chart_rows.append({"label": f'{r["metric"]} ({r["level"]})', "run": f"run {number[r['run_id']]}: {r['run_id']}",
                               "delta": r["delta"], "ci_low": low, "ci_high": high,
                               "significant": "yes" if mark else "no"})
    head = ("<tr><th>measure</th><th>level</th><th class=num>run</th><th class=num>value</th><th class=num>95% low</th>"
            "<th class=num>95% high</th><th class=num>n</th><th class=num>&Delta; vs run 1</th>"
            "<th class=num>&Delta; 95% low</th><th class=num>&Delta; 95% high</th><th class=num>p</th>"
            "<th class=num>p (Holm)</th><th></th></tr>")
    chart = figure("deltas", charts.deltas(chart_rows, [f"run {number[i]}: {i}" for i in ids[1:]]),
                   "Each later run minus run 1 (a drop is negative), paired over questions, with the paired 95% "
                   "interval that inverts the test; red: "
                   f"significant after Holm adjustment across the table's {sig['n_tests']} tests.") if chart_rows else ""
    note = (f'<p class="note">value and its 95% interval: each run\'s own, as in its report. &Delta;: the run '
            f"minus run 1 (a drop is negative) with the paired 95% interval that inverts its test; p: that paired "
            f"score test (McNemar's for 0/1 measures); p (Holm): adjusted across the "
            f"{sig['n_tests']} tests of this table; "
            f"higher / lower: p (Holm) &lt; {sig['alpha']}.</p>")
    warnings = budget_warnings(report["rows"], lambda r: f"run {number[r['run_id']]}: ")
    return (f'<section id="deltas-section"><h2>Paired differences from run 1</h2>{chart}{note}{warnings}'
            f'<div class="wide"><table id="deltas"><thead>{head}</thead><tbody>{"".join(trs)}</tbody></table></div>'
            "</section>")


def flip_anchor(run_number: int, query_id: str) -> str:
    """A flipped question's panel: ``r2-`` (the run it flipped in) and the question's anchor (``page.anchor``),
    so a question that flips in several runs has a panel, and an anchor, per run."""
    return f"r{run_number}-{anchor(query_id)}"


def _flips(source, ids: list[str], flipped: list[dict], depth: int) -> str:
    from assay.present.drilldown import question_detail

    parts, first = [], ids[0]
    rank = (lambda v: "none in the list" if v is None else f"rank {v}")
    for n, (other, f) in enumerate(zip(ids[1:], flipped), start=2):
        items = [("won", x) for x in f["won"]] + [("lost", x) for x in f["lost"]]
        parts.append(f'<h3>run 1 <span class="mono">{e(first)}</span> &rarr; run {n} <span class="mono">{e(other)}'
                     f'</span>: {len(f["won"])} won, {len(f["lost"])} lost</h3>')
        if not items:
            parts.append(f'<p class="note">No question flipped on {e(f["metric"])} ({e(f["level"])} level).</p>')
            continue
        panels, rows, row_attrs = [], [], []
        for tag, item in items:
            qid = item["query_id"]
            a = question_detail(source, first, qid, depth=depth)
            b = question_detail(source, other, qid, depth=depth)
            href = "#" + flip_anchor(n, qid)
            rows.append([f'<a class="qid"{attr("href", href)}{attr("title", qid)}>{e(qid)}</a>',
                         f'<a class="qtext"{attr("href", href)}>{e(a["query"]["query_text"])}</a>', tag,
                         "&ndash;" if item["rank_a"] is None else str(item["rank_a"]),
                         "&ndash;" if item["rank_b"] is None else str(item["rank_b"])])
            row_attrs.append(f' class="q {tag}"{attr("data-qid", qid)}')
            gold = "".join(gold_block(g) for g in a["gold"])
            panels.append(
                f'<div class="flip {tag}"{attr("id", flip_anchor(n, qid))}{attr("data-qid", qid)}{attr("data-run", other)}>'
                f'<h4><span class="qid">{e(qid)}</span> &middot; {tag}: first gold document at '
                f'{rank(item["rank_a"])} &rarr; {rank(item["rank_b"])}</h4>'
                f'<div class="question">{e(a["query"]["query_text"])}</div>{gold}'
                f'<div class="pair">{ranking(a, first)}{ranking(b, other)}</div></div>')
        parts.append(table(["id", "question", "flip", "rank in run 1", f"rank in run {n}"], rows,
                           attrs=f' class="flipped"{attr("data-run", other)}', row_attrs=row_attrs, numeric={3, 4}))
        parts.extend(panels)
    return (f'<section id="flips"><h2>Questions that flipped</h2><p class="note">Questions that {FLIP_MEASURE} at '
            f"{FLIP_LEVEL} level counts differently in a run than in run 1 (rank: of the first gold document), "
            f"then each with both final rankings (top {depth} chunks, plus the first relevant one when it ranks "
            "lower), the gold spans marked. Click a question to go to its rankings.</p>" + "".join(parts) + "</section>")
