"""One run's HTML report: header, headline measures (table and forest plot), slices, stage attribution,
latency, every question in a sortable table, and a drill-down per question.

Every figure comes from ``assay.present.report.build_report`` (the same rows as ``assay report --format json``),
the questions from ``assay.present.drilldown``. The one figure the text report lacks, Abstain by unanswerable
kind, is computed as every other: the measure's per-question values and ``metrics.stats.interval``, with
the run's seed and bootstrap samples.
"""

from __future__ import annotations

from assay.inputs.chunking import chunker_label
from assay.present.html import charts
from assay.present.html.drill import DEPTH, drill
from assay.present.html.page import anchor, attr, document, e, facts, figure, num, summary_section, table
from assay.present.html.summary import run_summary
from assay.measures import fill
from assay.measures.registry import DEFAULT_MEASURES
from assay.present.report import HEADLINE, RANKING_LEVELS, build_report

SLICE_FIELDS = (("category", "category"), ("form", "form"), ("hard_class", "hard class"))
LEVEL_ORDER = {"chunk": 0, "doc": 1, "query": 2, "answer": 3}


def build(source, run_id: str, measures=DEFAULT_MEASURES, level: str | None = None, depth: int = DEPTH) -> str:
    from assay.present.drilldown import question_details, question_rows

    report = build_report(source, run_id, measures, level)
    rows = question_rows(source, run_id)
    every = question_details(source, run_id, depth=depth)  # each SQL file once for the whole run
    details = [every[r["query_id"]] for r in rows]
    run = report["run"]
    body = [f"<h1>assay report: run <span class=mono>{e(run['run_id'])}</span></h1>",
            summary_section(run_summary(report)), _nav(), _header(run), _headline(report["metrics"]),
            _slices(source, report, rows, measures),
            _attribution(report.get("attribution") or {}), _latency(run, rows, details),
            _questions(rows), _drills(rows, details, depth)]
    return document("run", f"assay report {run['run_id']}", "".join(body), with_script=True)


def _nav() -> str:
    links = [("header", "run"), ("headline", "headline"), ("slices", "slices"), ("attribution", "attribution"),
             ("latency", "latency"), ("questions-section", "questions"), ("drilldowns", "drill-downs")]
    return '<nav class="muted">' + " &middot; ".join(f'<a href="#{a}">{t}</a>' for a, t in links) + "</nav>"


# -- header ------------------------------------------------------------------------------
def _hash(value: str) -> str:
    return f'<span class="mono" title="{e(value)}">{e(value[:12])}</span>'


def header_facts(run: dict) -> list[tuple[str, str]]:
    cfg = run["config"]
    stages = " &rarr; ".join(f'<span class="mono">{e(s["stage"])}</span>' for s in run.get("stages", []))
    lat = run["latency_ms"]
    out = [("status", e(run["status"])),
           ("pipeline", f'<span class="mono">{e(run["pipeline"])}</span>' + (f" ({stages})" if stages else "")),
           ("chunker", f'<span class="mono">{e(chunker_label(cfg["chunker"]))}</span>, candidate depth {e(cfg["depth"])}'),
           ("corpus", f"{_hash(run['corpus_hash'])} ({run['n_documents']} documents, {run['n_chunks']} chunks)"),
           ("judgments", f"{_hash(run['judgments_hash'])} ({run['n_questions']} questions: {run['n_answerable']} "
                         f"answerable, {run['n_no_answer']} no_answer)"),
           ("started", f"{e(run['started_at'])} (finished {e(run['finished_at'])})"),
           ("seed", f"{e(run['seed'])}; ties: {e(run['tie_break'])}; {e(cfg.get('bootstrap_samples', 1000))} "
                    "bootstrap samples"),
           ("latency", f"per question p50 {num(lat['p50'], 2)} ms, p95 {num(lat['p95'], 2)} ms")]
    for key, what in (("rescore_of", "a rescore (new judgments) of run"),
                      ("revalidate_of", "a revalidation (citation contract applied again) of run")):
        if cfg.get(key):
            out.append(("origin", f'{what} <span class="mono">{e(cfg[key])}</span>, reusing its hits'))
    retrieval = cfg.get("retrieval", {})
    dense = retrieval.get("dense")
    if dense:
        emb = run.get("embeddings") or {}
        out.append(("embedder", f'<span class="mono">{e(dense["embedding"]["model"])}</span> (onnx '
                                f'{_hash(dense["embedding"]["onnx_sha256"])}), vectors computed '
                                f'{e(emb.get("computed", 0))}, reused {e(emb.get("reused", 0))}'))
        from assay.present.report import truncation_line

        out.append(("embedder input", e(truncation_line(run))))
    rerank = retrieval.get("rerank")
    if rerank:
        out.append(("reranker", f'<span class="mono">{e(rerank.get("model"))}</span> over the top '
                                f'{e(rerank.get("top_n"))}'))
    gen = retrieval.get("generator")
    if gen:
        judge = gen.get("judge")
        out.append(("answers", f'generator <span class="mono">{e(gen.get("name"))}</span>'
                               + (f', judge <span class="mono">{e(judge.get("model"))}</span>'
                                  if isinstance(judge, dict) else ", no judge model")))
    if run.get("calibration"):
        c, applied = cfg["calibration"], run["calibration"]
        text = (f'<span class="mono">{e(c["calibration_id"])}</span>, threshold {num(c["threshold"])}: abstained on '
                f'{e(applied.get("abstained"))} questions')
        if "no_results" in applied:
            text += f" that had results; {e(applied['no_results'])} returned nothing on their own"
        if applied.get("in_sample"):
            text += (f' (fitted on run <span class="mono">{e(applied.get("fitted_on_run"))}</span> over these '
                     "questions: in-sample, so its abstention figures are optimistic)")
        out.append(("calibration", text))
    versions = ", ".join(f"{e(k)} {e(v)}" for k, v in sorted(run.get("versions", {}).items()))
    out.append(("versions", versions))
    if run.get("git_commit"):
        out.append(("git commit", f'<span class="mono">{e(run["git_commit"])}</span>'))
    return out


def _header(run: dict) -> str:
    return f'<section id="header"><h2>Run</h2>{facts([("run id", "<span class=mono>" + e(run["run_id"]) + "</span>")] + header_facts(run))}</section>'


# -- headline ----------------------------------------------------------------------------
def _label(metric: str, level: str) -> str:
    return f"{metric} ({level})"


def headline_rows(metrics: list[dict]) -> list[dict]:
    return [r for r in metrics if r["slice"] == "all"]


def _headline(metrics: list[dict]) -> str:
    overall = headline_rows(metrics)
    chart_rows = [{"label": _label(r["metric"], r["level"]), "level": r["level"], "value": r["value"],
                   "ci_low": r["ci_low"], "ci_high": r["ci_high"]} for r in overall]
    trs = "".join(
        f'<tr{attr("data-measure", r["metric"])}{attr("data-level", r["level"])}{budget_attr(r)}>'
        f'<td class="mono">{e(r["metric"])}{budget_mark(r)}</td>'
        f'<td>{e(r["level"])}</td><td class="value">{num(r["value"])}</td><td class="ci-low">{num(r["ci_low"])}</td>'
        f'<td class="ci-high">{num(r["ci_high"])}</td><td class="num">{r["n"]}</td></tr>' for r in overall)
    tbl = ('<div class="wide"><table id="headline"><thead><tr><th>measure</th><th>level</th><th class=num>value</th>'
           '<th class=num>95% low</th><th class=num>95% high</th><th class=num>n</th></tr></thead>'
           f"<tbody>{trs}</tbody></table></div>")
    chart = figure("headline", charts.forest(chart_rows),
                   "Each measure's mean over its questions with a 95% interval: Wilson for 0/1 measures, a seeded "
                   "bootstrap for graded ones. Chunk level judges the ranked chunks; doc level their documents.") \
        if chart_rows else ""
    note = ('<p class="note">Abstain and FalseAbstain are per question (level query); span and budget measures '
            "(SpanRecall@Ntok, ...) charge each result for the tokens it occupies.</p>")
    return (f'<section id="headline-section"><h2 id="headline-title">Headline measures</h2>{chart}{note}'
            f'{budget_warnings(overall)}{tbl}</section>')


def budget_attr(row: dict) -> str:
    """A row's budget, as data: 'filled' or 'not filled' (none for a measure without a budget)."""
    if row.get("budget_filled") is None:
        return ""
    return attr("data-budget", "filled" if row["budget_filled"] else "not filled")


def budget_mark(row: dict) -> str:
    return f' <b class="budget-short" title="{e(fill.describe(row))}">{fill.MARK}</b>' if fill.unfilled(row) else ""


def budget_warnings(rows: list[dict], prefix=lambda row: "") -> str:
    """One warning a budget that was not filled, as the text report prints it (``prefix``: e.g. the run)."""
    lines = [f'<p class="warn budget">{e(line)}</p>' for line in fill.notes(rows, prefix)]
    if lines:
        lines.append('<p class="note">A question whose results hold fewer tokens than the budget is scored on all '
                     "of them: the figure is that of a smaller context and would read the same at any larger budget."
                     "</p>")
    return "".join(lines)


# -- slices ------------------------------------------------------------------------------
def slice_columns(metrics: list[dict]) -> list[tuple[str, str]]:
    """The measures the slices show: the text report's headline columns, else every ranking measure present."""
    index = {(r["metric"], r["level"]) for r in metrics if r["slice"] == "all"}
    if all(c in index for c in HEADLINE):
        return list(HEADLINE)
    names = list(dict.fromkeys(r["metric"] for r in metrics))
    return [(m, lvl) for m in names for lvl in RANKING_LEVELS if (m, lvl) in index][:6]


def _cell(r: dict | None) -> str:
    return "&ndash;" if r is None else f'{num(r["value"])} <span class="muted">[{num(r["ci_low"])}, {num(r["ci_high"])}]</span>'


def _slice_section(field: str, title: str, rows: list[dict], columns: list[tuple[str, str]]) -> str:
    index = {(r["metric"], r["level"], r["slice"]): r for r in rows}
    values = sorted({r["slice"] for r in rows if r["slice"].startswith(field + "=")
                     and (r["metric"], r["level"]) in columns})
    if not values:
        return ""
    chart_rows = [{"measure": _label(m, lvl), "slice": s.split("=", 1)[1], "value": r["value"], "ci_low": r["ci_low"],
                   "ci_high": r["ci_high"], "n": r["n"]}
                  for s in values for m, lvl in columns if (r := index.get((m, lvl, s)))]
    body = []
    for s in values:
        n = next((index[(m, lvl, s)]["n"] for m, lvl in columns if (m, lvl, s) in index), "")
        body.append([f'<span class="mono">{e(s.split("=", 1)[1])}</span>', str(n)]
                    + [_cell(index.get((m, lvl, s))) for m, lvl in columns])
    chart = figure(f"slices-{field}", charts.slices(chart_rows, [_label(m, lvl) for m, lvl in columns]),
                   f"By {title}, answerable questions: each slice's mean and 95% interval.")
    return (f'<h3>By {e(title)}</h3>{chart}'
            + table([e(title), "n"] + [e(_label(m, lvl)) for m, lvl in columns], body, numeric={1}))


def abstain_by_kind(source, report: dict, qrows: list[dict], measures) -> list[dict]:
    """Abstain over the no_answer questions, all of them and by unanswerable kind, with Wilson intervals, as
    ``metrics.compute.evaluate`` computes its slices (it slices by category, form and hard class only)."""
    from assay.measures.compute import per_query
    from assay.measures.stats import interval

    measure = next((m for m in measures if m.name == "Abstain"), None)
    if measure is None:
        return []
    run = report["run"]
    values = {qid: v for (qid, _), v in per_query(source, run["run_id"], measure).items()}
    kinds = {r["query_id"]: r["unanswerable"] or "unspecified" for r in qrows if not r["answerable"]}
    groups = {"all": sorted(q for q in kinds if q in values)}
    for qid in groups["all"]:
        groups.setdefault(kinds[qid], []).append(qid)
    out = []
    for name, qids in groups.items():
        if not qids:
            continue
        vals = [values[q] for q in qids]
        low, high = interval(vals, measure.family.interval, seed=run["seed"],
                             samples=run["config"].get("bootstrap_samples", 1000))
        out.append({"measure": "Abstain (query)", "slice": name, "value": sum(vals) / len(vals), "ci_low": low,
                    "ci_high": high, "n": len(vals)})
    return out


def _slices(source, report: dict, qrows: list[dict], measures) -> str:
    metrics = report["metrics"]
    columns = slice_columns(metrics)
    parts = [_slice_section(field, title, metrics, columns) for field, title in SLICE_FIELDS]
    kinds = abstain_by_kind(source, report, qrows, measures)
    if kinds:
        chart = figure("slices-unanswerable", charts.slices(kinds, ["Abstain (query)"]),
                       "No_answer questions: the share on which the run returned nothing (Abstain), all of them and "
                       "by unanswerable kind, with Wilson 95% intervals.")
        body = [[f'<span class="mono">{e(k["slice"])}</span>', str(k["n"]), _cell(k)] for k in kinds]
        abstain = [r for r in metrics if r["metric"] == "Abstain" and r["slice"] != "all"]
        parts.append("<h3>By unanswerable kind (no_answer questions)</h3>" + chart
                     + table(["unanswerable kind", "n", "Abstain"], body, numeric={1}))
        if abstain:
            parts.append('<p class="note">Abstain by the other slices of the no_answer questions:</p>'
                         + table(["slice", "n", "Abstain"], [[f'<span class="mono">{e(r["slice"])}</span>', str(r["n"]),
                                                              _cell(r)] for r in abstain], numeric={1}))
    return f'<section id="slices"><h2>Slices</h2>{"".join(parts)}</section>'


# -- attribution and latency -------------------------------------------------------------
def _share_table(counts: dict) -> str:
    total = sum(counts.values()) or 1
    return table(["lost at", "n", "share"], [[e(k), str(v), num(v / total)] for k, v in counts.items()], numeric={1, 2})


def _attribution(att: dict) -> str:
    panels, parts = [], []
    if att.get("funnel"):
        panels.append(("Answerable questions by the stage that lost their gold passage (chunk level)",
                       list(att["funnel"].items())))
        parts.append("<h3>Retrieval</h3>" + _share_table(att["funnel"]))
        if "fusion" in att:
            parts.append(f'<p>Fusion rescued {att["fusion"]["rescued"]} questions (gold missing from one input '
                         f'list, kept) and lost {att["fusion"]["lost"]}.</p>')
    if att.get("answer_funnel"):
        panels.append(("Through the answer stage (answerable questions)", list(att["answer_funnel"].items())))
        parts.append("<h3>Answer stage</h3>" + _share_table(att["answer_funnel"]))
        parts.append("<p>Answers by status (all questions):</p>" + table(
            ["status", "refusal", "n"], [[e(a["status"]), e(a["refusal"] or ""), str(a["n"])] for a in att["answers"]],
            numeric={2}))
        if att.get("judge"):
            parts.append("<p>Judge verdicts: " + ", ".join(f"{e(k)} {v}" for k, v in att["judge"].items()) + "</p>")
    chart = figure("funnel", charts.funnel(panels),
                   "Stage attribution: where each answerable question lost its gold passage; found means it "
                   "reached the final list.") if panels else ""
    return f'<section id="attribution"><h2>Stage attribution</h2>{chart}{"".join(parts)}</section>'


def _latency(run: dict, qrows: list[dict], details: list[dict]) -> str:
    stages = [s["stage"] for s in run.get("stages", [])]
    timed = [(s["stage"], s["latency_ms"]) for d in details for s in d["stages"] if s["latency_ms"] is not None]
    timed += [("whole question", r["latency_ms"]) for r in qrows if r["latency_ms"] is not None]
    points = [{"stage": stage, "ms": ms} for stage, ms in timed if ms > 0]
    zero = {}  # a log scale has no 0: a stage that took no measurable time is said in words instead
    for stage, ms in timed:
        if ms <= 0:
            zero[stage] = zero.get(stage, 0) + 1
    said = "; ".join(f"{stage}: {n} question{'s' if n != 1 else ''}" for stage, n in zero.items())
    caption = ("Per-question latency on a log scale, by stage and for the whole question: a tick per question, a "
               "dark bar at the median.") + (f" Timings of 0 ms are not drawn ({said})." if zero else "")
    chart = figure("latency", charts.latency(points, stages + ["whole question"]), caption) if points else ""
    body = [[f'<span class="mono">{e(s["stage"])}</span>', num(s["mean_latency_ms"], 3)] for s in run.get("stages", [])]
    lat = run["latency_ms"]
    note = f"<p>Whole question: p50 {num(lat['p50'], 2)} ms, p95 {num(lat['p95'], 2)} ms.</p>"
    return (f'<section id="latency"><h2>Latency</h2>{chart}{note}'
            f'{table(["stage", "mean ms per question"], body, numeric={1})}</section>')


# -- questions ---------------------------------------------------------------------------
def _hit(value) -> tuple[str, str]:
    if value is None:
        return "&ndash;", ""
    return ('<span class="hit-mark">hit</span>', "1") if value else ('<span class="miss-mark">miss</span>', "0")


def _num_cell(value, places: int | None = None) -> str:
    if value is None:
        return '<td class="num" data-v="">&ndash;</td>'
    shown = str(value) if places is None else f"{value:.{places}f}"
    return f'<td class="num" data-v="{value}">{shown}</td>'


def _questions(rows: list[dict]) -> str:
    answers = any(r["answer_status"] is not None for r in rows)
    heads = [("id", "text", ""), ("question", "text", ""), ("category", "text", ""), ("form", "text", ""),
             ("hard class", "text", ""), ("S@3 doc", "num", "Success@3, document level: a gold document in the top 3"),
             ("S@10 chunk", "num", "Success@10, chunk level: a chunk overlapping a gold span in the top 10"),
             ("chunk rank", "num", "rank of the first chunk overlapping a gold span (final list)"),
             ("doc rank", "num", "rank of the first gold document (final list)"),
             ("lost at", "text", "the stage where the gold passage was lost"),
             ("ms", "num", "latency of the whole question, milliseconds")]
    if answers:
        heads.append(("answer", "text", "the answer's status"))
    th = "".join(f'<th data-sort="{kind}"{" class=num" if kind == "num" else ""}{attr("title", tip or None)}>{name}</th>'
                 for name, kind, tip in heads)
    trs = []
    for r in rows:
        doc3, doc3_v = _hit(r["success_doc_3"])
        ch10, ch10_v = _hit(r["success_chunk_10"])
        state = "unanswerable" if not r["answerable"] else ("hit" if r["success_doc_3"] else "miss")
        lost = r["lost_at"] if r["answerable"] else f"no answer ({r['unanswerable'] or 'unspecified'})"
        href = "#" + anchor(r["query_id"])
        cells = [f'<td class="qid-cell"><a class="qid"{attr("href", href)}{attr("title", r["query_id"])}>'
                 f'{e(r["query_id"])}</a></td>',
                 f'<td class="question"><a class="qtext"{attr("href", href)}>{e(r["query_text"])}</a></td>', f"<td>{e(r['category'])}</td>",
                 f"<td>{e(r['form'])}</td>", f"<td>{e(r['hard_class'])}</td>",
                 f'<td class="num" data-v="{doc3_v}">{doc3}</td>', f'<td class="num" data-v="{ch10_v}">{ch10}</td>',
                 _num_cell(r["first_rank_chunk"]), _num_cell(r["first_rank_doc"]), f"<td>{e(lost)}</td>",
                 _num_cell(r["latency_ms"], 2)]
        if answers:
            cells.append(f"<td>{e(r['answer_status'] or '')}</td>")
        trs.append(f'<tr class="q {state}"{attr("data-qid", r["query_id"])}>{"".join(cells)}</tr>')
    controls = ('<p><input id="q-filter" type="search" placeholder="filter questions (any text in the row)" '
                f'aria-label="filter questions" hidden><span id="q-count" class="muted">{len(rows)} questions</span></p>')
    return (f'<section id="questions-section"><h2>Questions</h2>{controls}'
            '<p class="note">Click a column header to sort. S@3 doc: a gold document in the top 3 (Success@3, '
            "document level); S@10 chunk: a chunk overlapping a gold span in the top 10; chunk rank and doc rank: "
            "the first relevant chunk's and document's rank in the final list. Click a question (its id or its "
            "text) to open its drill-down; its link, report.html#q-ID, opens it from anywhere.</p>"
            f'<div class="wide"><table id="questions"><thead><tr>{th}</tr></thead><tbody>{"".join(trs)}</tbody>'
            "</table></div></section>")


def _drills(rows: list[dict], details: list[dict], depth: int) -> str:
    out = []
    for r, d in zip(rows, details):
        if not r["answerable"]:
            verdict = '<span class="muted">no answer in the corpus</span>'
        elif r["first_rank_chunk"] is not None:
            mark = "hit-mark" if r["success_chunk_10"] else "miss-mark"  # green only within the top 10
            verdict = f'<span class="{mark}">first relevant chunk at rank {r["first_rank_chunk"]}</span>'
        else:
            verdict = f'<span class="miss-mark">lost at {e(r["lost_at"])}</span>'
        summary = f'<span class="qid">{e(r["query_id"])}</span> {e(r["query_text"])} &middot; {verdict}'
        out.append(drill(d, anchor(r["query_id"]), summary))
    return ('<section id="drilldowns"><h2>Drill-down</h2><p class="note">Each question with its gold quotes and '
            f"each stage's top {depth} chunks (plus the first relevant chunk when it ranks lower), the gold spans "
            "marked in their text (a chunk of a gold document that misses the gold span: dotted edge). A chunk an "
            "earlier stage showed points there.</p>" + "".join(out) + "</section>")
