"""Several runs in one table: a row per measure and level, a column per run, each run tested against the first.

Each column is that run's own figures (report.run_metrics: the mean over questions and its 95%
interval, seeded as the run was), so it equals the run's `assay report`. Every later run is compared
with the first question by question with comparison.paired_tests, as `assay compare FIRST RUN` does
(one score test each: McNemar's for 0/1 measures, the same construction for graded ones); the
p-values of all the tests in the table are then Holm-adjusted together. Measures that count citations
or claims rather than questions do not pair across runs: their values are shown, untested. When the
runs rank different units (chunk sizes, whole documents) the report carries compare's warning.
"""

from __future__ import annotations

import csv
import io
from assay.core import jsonout

from assay.core import escape, tables
from assay.inputs.chunking import chunker_label
from assay.verdicts.comparison import check_comparable, paired_tests
from assay.core.errors import ConfigError
from assay.measures import fill
from assay.measures.registry import DEFAULT_MEASURES
from assay.present.report import run_header, run_metrics

ALPHA = 0.05
HIGHER, LOWER = "▲", "▼"
ROW_FIELDS = ("metric", "level", "run_id", "value", "n", "ci_low", "ci_high", "delta", "p_value", "p_holm") + fill.FIELDS


def _untested_reason(measure) -> str | None:
    unit = measure.family.unit
    return None if unit == "question" else f"one value per {unit}, not per question: nothing pairs across runs"


def build_runs_report(warehouse, run_ids: list[str], measures=DEFAULT_MEASURES, level: str | None = None) -> dict:
    """The runs' values side by side, with each run's delta and paired test against the first run."""
    from assay.verdicts import units
    from assay.verdicts.significance import holm

    for i, run_id in enumerate(run_ids):
        if run_id in run_ids[:i]:
            raise ConfigError(f"run {run_id} is given twice; name each run once")
    headers = [run_header(warehouse, run_id) for run_id in run_ids]
    first = headers[0]
    for other in headers[1:]:
        check_comparable(first, other)

    values = {h["run_id"]: {(r["metric"], r["level"]): r for r in run_metrics(warehouse, h, measures, level)
                            if r["slice"] == "all"} for h in headers}
    position = {m.name: i for i, m in enumerate(measures)}
    keys = sorted(dict.fromkeys(k for h in headers for k in values[h["run_id"]]), key=lambda k: position[k[0]])
    tests = {(h["run_id"], t["metric"], t["level"]): t
             for h in headers[1:]
             for t in paired_tests(warehouse, first, h, measures, slices=False)
             if (t["metric"], t["level"]) in keys}

    rows = []
    for metric, lvl in keys:
        base = values[first["run_id"]].get((metric, lvl))
        for h in headers:
            r = values[h["run_id"]].get((metric, lvl))
            if r is None:  # not computed for this run (e.g. answer measures of a run without answers)
                continue
            test = tests.get((h["run_id"], metric, lvl))
            rows.append({"metric": metric, "level": lvl, "run_id": h["run_id"], "value": r["value"], "n": r["n"],
                         "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                         "delta": None if h is first or base is None else r["value"] - base["value"],
                         "p_value": test["p_value"] if test else None, "p_holm": None,
                         **{f: r[f] for f in fill.FIELDS}})
    tested = [r for r in rows if r["p_value"] is not None]
    for r, adjusted in zip(tested, holm([r["p_value"] for r in tested])):
        r["p_holm"] = adjusted

    ranked = [units.describe(warehouse, h["run_id"])["label"] for h in headers]
    warning = None if len(set(ranked)) == 1 else (
        "retrieval units differ: " + ", ".join(f"run {i} ranks {label}" for i, label in enumerate(ranked, start=1))
        + "; " + units.SPAN_ADVICE)
    measure_info = [{"metric": m.name,
                     "test": next((t["test"] for (_, metric, _), t in tests.items() if metric == m.name), None),
                     "untested": _untested_reason(m)} for m in measures]
    return {
        "runs": [{"run_id": h["run_id"], "pipeline": h["pipeline"], "chunker": chunker_label(h["config"]["chunker"]),
                  "n_questions": h["n_questions"], "started_at": h["started_at"], "unit": unit}
                 for h, unit in zip(headers, ranked)],
        "warning": warning,
        "measures": measure_info,
        "significance": {"against": first["run_id"], "alpha": ALPHA, "adjustment": "holm", "n_tests": len(tested)},
        "verdicts": _verdicts(headers, rows, tests, measures, warning, len(tested)),
        "rows": rows,
    }


def _verdicts(headers, rows, tests, measures, warning, n_tests) -> list[dict]:
    """Each later run against the first in words (assay.verdicts.verdict_text.comparison), on the measure the report leads
    with: the first of verdict_text.HEADLINES present (UNITS_DIFFER when the runs rank different units), or the
    first measure asked for with -m."""
    from assay.verdicts import verdict_text

    first = headers[0]["run_id"]
    chosen = None if tuple(measures) == tuple(DEFAULT_MEASURES) else [m.name for m in measures]
    head = verdict_text.pick([r for r in rows if r["run_id"] == first], chosen,
                             verdict_text.UNITS_DIFFER if warning else verdict_text.HEADLINES)
    out = []
    for i, h in enumerate(headers[1:], start=2):
        test = None if head is None else tests.get((h["run_id"], head["metric"], head["level"]))
        row = next((r for r in rows if r["run_id"] == h["run_id"] and test is not None
                    and (r["metric"], r["level"]) == (head["metric"], head["level"])), None)
        if test is None or row is None:
            continue
        family = {"correction": "holm", "size": n_tests, "p_adjusted": row["p_holm"]}
        verdict = verdict_text.comparison({**test, "metric": head["metric"], "level": head["level"]},
                                          f"run 1 ({first})", f"Run {i} ({h['run_id']})", (), family, ALPHA)
        out.append({"run": i, "run_id": h["run_id"], "against": first, **verdict})
    return out


# -- rendering ---------------------------------------------------------------------------
def _mark(row: dict) -> str:
    if row["p_holm"] is None or row["p_holm"] >= ALPHA:
        return " "
    return HIGHER if row["delta"] > 0 else LOWER


def _text(report: dict, markdown: bool) -> str:
    runs = report["runs"]
    ids = [r["run_id"] for r in runs]
    cells = {(r["metric"], r["level"], r["run_id"]): r for r in report["rows"]}
    tests = {m["metric"]: m for m in report["measures"]}
    body = []
    for metric, lvl in dict.fromkeys((r["metric"], r["level"]) for r in report["rows"]):
        row = [metric, lvl]
        for run_id in ids:
            c = cells.get((metric, lvl, run_id))
            row.append("-" if c is None else f"{c['value']:.3f}{_mark(c)} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"
                       + (f" {fill.MARK}" if fill.unfilled(c) else ""))
        ns = list(dict.fromkeys(str(cells[(metric, lvl, i)]["n"]) for i in ids if (metric, lvl, i) in cells))
        info = tests[metric]
        row += ["/".join(ns), info["test"] or ("n/a" if info["untested"] else "-")]
        body.append(row)
    sig = report["significance"]
    esc = escape.markdown_cell if markdown else escape.terminal
    lines = [f"run {i}  {esc(r['run_id'])}  pipeline {esc(r['pipeline'])}  chunker {esc(r['chunker'])}  "
             f"{r['n_questions']} questions"
             + ("  (the baseline: every other run is tested against it)" if i == 1 else "")
             for i, r in enumerate(runs, start=1)]
    said = [esc(v["sentence"]) for v in report.get("verdicts", [])]
    if markdown:
        lines = ([f"## assay report: {len(runs)} runs", ""] + (said + [""] if said else [])
                 + [f"- {line}" for line in lines])
    elif said:
        lines = said + [""] + lines
    if report["warning"]:
        lines += ["", "WARNING: " + esc(report["warning"])]
    notes = [f"{HIGHER} / {LOWER}: higher / lower than run 1 in a paired test (the test column), p < {sig['alpha']}",
             f"after Holm adjustment across the {sig['n_tests']} test(s) of this table; "
             "no mark: no significant difference.",
             "Each cell is the run's value and its 95% interval, as in its own report; --format json has every",
             "delta (the run minus run 1: a drop is negative) and p-value."]
    untested = [m for m in report["measures"] if m["untested"] and any(r["metric"] == m["metric"]
                                                                       for r in report["rows"])]
    notes += [f"{m['metric']}: n/a, {m['untested']}." for m in untested]
    shown = {r["metric"] for r in report["rows"]}
    missing = [m["metric"] for m in report["measures"] if m["metric"] not in shown]
    if missing:
        notes.append(f"not computed for any of these runs (no values, not zero): {', '.join(missing)}.")
    unfilled = [r for r in report["rows"] if fill.unfilled(r)]
    if unfilled:
        number = {run_id: i for i, run_id in enumerate(ids, start=1)}
        notes += fill.notes(unfilled, lambda r: f"run {number[r['run_id']]}: ") + [
            f"{fill.MARK} a question whose results hold fewer tokens than the budget is scored on all of them: "
            "the figure is that of a smaller context."]
    table = tables.render(["metric", "level"] + ids + ["n", "test"], body, markdown=markdown)
    return "\n".join(lines + ["", table, ""] + notes) + "\n"


def render(report: dict, fmt: str) -> str:
    if fmt == "json":
        return jsonout.dumps(report, indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: escape.printed_csv_cell(v) for k, v in row.items()} for row in report["rows"])
        return buf.getvalue()
    return _text(report, markdown=(fmt == "markdown"))
