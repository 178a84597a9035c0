"""A run's report: header plus metric rows, rendered as table, JSON, CSV or Markdown."""

from __future__ import annotations

import csv
import io
import json

from assay.core import jsonout
import math

from assay.core import escape, tables
from assay.core.credentials import redact_config_urls
from assay.inputs.chunking import chunker_label
from assay.measures import fill
from assay.measures.compute import evaluate
from assay.measures.registry import DEFAULT_MEASURES

FORMATS = ("table", "json", "csv", "markdown")
RANKING_LEVELS = ("chunk", "doc")  # what --level chooses between; per-question and answer measures have one level
ROW_FIELDS = ("metric", "level", "slice", "value", "n", "ci_low", "ci_high") + fill.FIELDS
# Columns of the per-slice breakdown: (metric, level); when a report lacks one, the breakdown shows its own.
HEADLINE = (("Success@1", "doc"), ("Success@3", "doc"), ("Success@10", "chunk"), ("nDCG@10", "chunk"), ("RR@10", "chunk"))


def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def run_header(warehouse, run_id: str) -> dict:
    cols, rows = warehouse.query("reports/run_summary", run_id=run_id)
    header = dict(zip(cols, rows[0]))
    header["config"] = redact_config_urls(json.loads(header["config"]))  # runs stored before URLs were redacted
    header["versions"] = json.loads(header["versions"])
    for key in ("started_at", "finished_at"):
        header[key] = header[key].isoformat(timespec="seconds")
    _, lat = warehouse.query("reports/latency", run_id=run_id)
    lat = [r[0] for r in lat]
    header["latency_ms"] = {"p50": _percentile(lat, 0.5), "p95": _percentile(lat, 0.95)}
    header["n_no_answer"] = header["n_questions"] - header["n_answerable"]
    stats = json.loads(header.pop("stats") or "{}")
    header["embeddings"] = stats.get("embeddings")
    header["calibration"] = stats.get("calibration")
    header["truncation"] = stats.get("truncation")  # per embedding stage; None for runs without one
    _, stages = warehouse.query("reports/stages", run_id=run_id)
    header["stages"] = [{"stage": st, "mean_latency_ms": ms} for st, ms in stages]
    return header


def attribution(warehouse, run_id: str) -> dict:
    """The loss funnel (answerable questions by the stage that lost them) and fusion's effect."""
    _, funnel = warehouse.query("reports/attribution", run_id=run_id)
    out = {"funnel": {lost_at: n for lost_at, n, _, _, _ in funnel}}
    if any(fused for *_, fused in funnel):  # a fusion stage ran
        out["fusion"] = {"rescued": sum(row[2] for row in funnel), "lost": sum(row[3] for row in funnel)}
    # a run without answers has no answer funnel: skip its query, whose run filter does not reach the hits
    # tables through the answer_attribution view (it reads every run's hit lists)
    _, reasons = warehouse.query("reports/answer_reasons", run_id=run_id)
    _, answer_funnel = warehouse.query("reports/answer_funnel", run_id=run_id) if reasons else (None, [])
    if answer_funnel:
        out["answer_funnel"] = {lost_at: n for lost_at, n in answer_funnel}
        out["answers"] = [{"status": st, "refusal": rf or None, "n": n} for st, rf, n in reasons]
        _, verdicts = warehouse.query("reports/judge_verdicts", run_id=run_id)
        if verdicts:
            out["judge"] = dict(verdicts)
    return out


def run_metrics(warehouse, header: dict, measures=DEFAULT_MEASURES, level: str | None = None) -> list[dict]:
    """A run's metric rows, with the intervals seeded as the run was. ``level`` (chunk or doc) keeps the
    rows at that ranking level and those of single-level measures (Abstain, answer measures). Each row says
    whether its context budget was filled (``metrics.fill``; None for measures without a budget)."""
    rows = evaluate(warehouse, header["run_id"], measures, seed=header["seed"],
                    samples=header["config"].get("bootstrap_samples", 1000))
    kept = [r.as_dict() for r in rows if level is None or r.level == level or r.level not in RANKING_LEVELS]
    return fill.annotate(warehouse, header["run_id"], kept)


def build_report(warehouse, run_id: str, measures=DEFAULT_MEASURES, level: str | None = None) -> dict:
    header = run_header(warehouse, run_id)
    metrics = run_metrics(warehouse, header, measures, level)
    return {"run": header, "verdict": run_verdict(warehouse, run_id, metrics, measures), "metrics": metrics,
            "attribution": attribution(warehouse, run_id)}


VERDICT_ALPHA = 0.05
"""The level of the minimum detectable change a one-run report states (as compare's tests)."""


def run_verdict(warehouse, run_id: str, metrics: list[dict], measures=DEFAULT_MEASURES) -> dict | None:
    """The report's verdict in words (assay.verdicts.verdict_text.run): the default measures lead with the first of
    verdict_text.HEADLINES present, measures chosen with -m with the first of them. Its minimum detectable change
    is the one a paired comparison at this n would have if the per-question changes varied as much as this run's
    values of that measure (assay.verdicts.power)."""
    from assay.verdicts import verdict_text
    from assay.measures.compute import values_of
    from assay.verdicts.power import minimum_detectable_change, sample_sd
    from assay.measures.registry import parse_measure

    chosen = None if tuple(measures) == tuple(DEFAULT_MEASURES) else [m.name for m in measures]
    head = verdict_text.pick(metrics, chosen)
    if head is None:
        return None
    values = values_of(warehouse, run_id, parse_measure(head["metric"]), head["level"])
    mdc = minimum_detectable_change(sample_sd(values), len(values), VERDICT_ALPHA)
    return verdict_text.run(metrics, head, mdc)


# -- rendering ---------------------------------------------------------------------------
def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def _ci(row) -> str:
    return f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _header_lines(run: dict, esc=escape.terminal) -> list[str]:
    """The header, every stored name and id in it passed through ``esc`` (terminal or markdown)."""
    cfg = run["config"]
    lat = run["latency_ms"]
    stages = " -> ".join(esc(s["stage"]) for s in run.get("stages", [])) or "bm25 -> final"
    lines = [
        f"run {esc(run['run_id'])}  pipeline {esc(run['pipeline'])} ({stages})  "
        f"chunker {esc(chunker_label(cfg['chunker']))}  "
        f"depth {cfg['depth']}",
        f"corpus {run['corpus_hash'][:12]} ({run['n_documents']} documents, {run['n_chunks']} chunks)  "
        f"judgments {run['judgments_hash'][:12]} ({run['n_questions']} questions: "
        f"{run['n_answerable']} answerable, {run['n_no_answer']} no_answer)",
        f"latency per question p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms  "
        f"seed {run['seed']}  ties: {run['tie_break']}",
    ]
    for key, what in (("rescore_of", "a rescore (new judgments) of run"),
                      ("revalidate_of", "a revalidation (citation contract applied again) of run")):
        if cfg.get(key):
            lines.append(f"this run is {what} {esc(cfg[key])}, reusing its hits")
    dense = cfg.get("retrieval", {}).get("dense")
    if dense:
        emb = run.get("embeddings") or {}
        lines.append(f"embedder {esc(dense['embedding']['model'])} "
                     f"(onnx {esc(dense['embedding']['onnx_sha256'][:12])})  "
                     f"vectors computed {emb.get('computed', 0)}, reused {emb.get('reused', 0)}")
        lines.append(f"embedder input: {truncation_line(run)}")
    rerank = cfg.get("retrieval", {}).get("rerank")
    if rerank:
        lines.append(f"reranker {esc(rerank.get('model'))} over the top {rerank['top_n']}")
    if run.get("calibration"):
        c, applied = cfg["calibration"], run["calibration"]
        if "no_results" in applied:
            lines.append(f"calibration {esc(c['calibration_id'])} (threshold {c['threshold']:.3f}): abstained on "
                         f"{applied['abstained']} questions that had results; "
                         f"{applied['no_results']} returned nothing on their own")
        else:  # stored before the two were counted apart
            lines.append(f"calibration {esc(c['calibration_id'])} (threshold {c['threshold']:.3f}): "
                         f"{applied['abstained']} questions returned nothing (calibrated abstentions and "
                         "empty results together)")
        if applied.get("in_sample"):
            lines.append(f"calibration {esc(c['calibration_id'])} was fitted on run "
                         f"{esc(applied['fitted_on_run'])} over "
                         "these questions: in-sample, so its abstention figures are optimistic; "
                         "fit on other questions for an honest figure")
    return lines


def truncation_line(run: dict) -> str:
    """What a dense run's embedder cut (assay.retrieval.embedding.truncation), in words; runs stored before it was
    counted say so rather than nothing."""
    from assay.retrieval.embedding.truncation import describe

    record = (run.get("truncation") or {}).get("dense")
    if record is None:
        return "truncation not recorded (the run predates assay counting it)"
    return describe(record)


def budget_notes(rows: list[dict]) -> list[str]:
    """The lines under a table that marks measures whose context budget was not filled."""
    return fill.notes(rows) + [
        f"{fill.MARK} a question whose results hold fewer tokens than the budget is scored on all of them: the "
        "figure is that of a smaller context and would read the same at any larger budget."]


def _text_report(report: dict, markdown: bool) -> str:
    def grid(headers, body):
        return tables.render(headers, body, markdown=markdown)

    run, rows = report["run"], report["metrics"]
    overall = [r for r in rows if r["slice"] == "all"]
    index = {(r["metric"], r["level"], r["slice"]): r for r in rows}
    metrics = list(dict.fromkeys(r["metric"] for r in overall))
    body = []
    unfilled = [r for r in overall if fill.unfilled(r)]
    marked = {r["metric"] for r in unfilled}
    for m in metrics:
        cells = [f"{m} {fill.MARK}" if m in marked else m]
        for level in ("chunk", "doc"):
            r = index.get((m, level, "all")) or (
                (index.get((m, "query", "all")) or index.get((m, "answer", "all"))) if level == "chunk" else None)
            cells += [_fmt(r["value"]), _ci(r)] if r else ["", ""]
        n = next(r["n"] for r in overall if r["metric"] == m)
        body.append(cells + [str(n)])
    main = grid(["metric", "chunk", "95% CI", "doc", "95% CI", "n"], body)

    columns = HEADLINE if all((m, lvl, "all") in index for m, lvl in HEADLINE) else [
        (m, lvl) for m in metrics for lvl in RANKING_LEVELS if (m, lvl, "all") in index]
    slices = sorted({r["slice"] for r in rows if r["slice"] != "all"})
    sbody = []
    for s in slices:
        n = next((index[(m, lvl, s)]["n"] for m, lvl in columns if (m, lvl, s) in index), None)
        if n is None:
            continue
        sbody.append([s, str(n)] + [_fmt(index[(m, lvl, s)]["value"]) if (m, lvl, s) in index else "-"
                                    for m, lvl in columns])
    abst = [[s, str(index[("Abstain", "query", s)]["n"]), _fmt(index[("Abstain", "query", s)]["value"])]
            for s in ["all"] + slices if ("Abstain", "query", s) in index]
    breakdown = grid(["slice", "n"] + [f"{m} ({lvl})" for m, lvl in columns], sbody)
    esc = escape.markdown_cell if markdown else escape.terminal
    parts = _header_lines(run, esc)
    said = (report.get("verdict") or {}).get("sentence")
    if markdown:  # inside a code span nothing is markup but a backtick, and backslashes show as typed
        title = escape.terminal(str(run["run_id"]).replace("`", "'"))
        parts = [f"## assay report `{title}`", ""] + ([esc(said), ""] if said else []) + [f"- {line}" for line in parts]
    elif said:
        parts = [esc(said), ""] + parts
    note = "Abstain and FalseAbstain are per question (shown in the chunk column)." if any(
        r["level"] == "query" for r in overall) else ""
    gen = run["config"].get("retrieval", {}).get("generator")
    if gen:
        note += (f" Answer metrics (answer_rate, refusal_rate, citation_precision, faithfulness) come from the "
                 f"{esc(gen['name'])} generator; citation_precision and faithfulness are rule-based.")
        if isinstance(gen.get("judge"), dict):
            verdicts = (report.get("attribution") or {}).get("judge", {})
            missing = verdicts.get("unavailable", 0) + verdicts.get("unparsed", 0)
            note += (f" judged_faithfulness is judged by {esc(gen['judge']['model'])}"
                     + (f"; {missing} verdict(s) unavailable or unreadable, recorded and left out, never replaced"
                        if missing else "") + ".")
        else:
            note += " No judge model was configured."
    parts += (["", note.strip()] if note else []) + ["", main]
    if unfilled:
        parts += [""] + budget_notes(unfilled)
    if columns:
        parts += ["", "By slice (answerable questions):", "", breakdown]
    if len(abst) > 1:
        parts += ["", "Abstention by slice (no_answer questions):", "", grid(["slice", "n", "Abstain"], abst)]
    att = report.get("attribution") or {}
    if att.get("funnel"):
        total = sum(att["funnel"].values())
        funnel = [[k, str(v), f"{v / total:.3f}"] for k, v in att["funnel"].items()]
        parts += ["", "Where answerable questions lost their gold passage (stage attribution, chunk level):", "",
                  grid(["lost at", "n", "share"], funnel)]
        if "fusion" in att:
            parts.append(f"fusion rescued {att['fusion']['rescued']} questions (gold missing from one input list, "
                         f"kept) and lost {att['fusion']['lost']}")
    if att.get("answer_funnel"):
        total = sum(att["answer_funnel"].values())
        rows_ = [[k, str(v), f"{v / total:.3f}"] for k, v in att["answer_funnel"].items()]
        parts += ["", "Through the answer stage (answerable questions):", "", grid(["lost at", "n", "share"], rows_)]
        parts += ["", "Answers by status (all questions):", "",
                  grid(["status", "refusal", "n"], [[a["status"], a["refusal"], a["n"]] for a in att["answers"]])]
    return "\n".join(parts) + "\n"


def render(report: dict, fmt: str) -> str:
    if fmt == "json":
        return jsonout.dumps(report, indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=("run_id",) + ROW_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in report["metrics"]:
            cells = {"run_id": report["run"]["run_id"], **row}
            writer.writerow({k: escape.printed_csv_cell(v) for k, v in cells.items()})
        return buf.getvalue()
    return _text_report(report, markdown=(fmt == "markdown"))
