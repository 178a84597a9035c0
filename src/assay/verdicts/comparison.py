"""Comparing runs: comparability, configuration differences, and `assay compare`.

Two runs are comparable when their judgments hash and corpus hash match: then
they asked the same questions against the same documents, and every metric can
be compared question by question (paired). Each change (B - A) gets ONE paired
inference: a score test (McNemar's for 0/1 measures, with Tango's interval; the same
construction for graded ones) and the 95% interval that inverts it, so the interval excludes
0 exactly when p < 0.05 (assay.verdicts.inference); p-values are also shown
Holm-adjusted across every test in one table.
"""

from __future__ import annotations

import json

from assay.core.errors import AssayError
from assay.measures.registry import DEFAULT_MEASURES, parse_measure


ALPHA = 0.05
"""The level of compare's two-sided intervals: a 95% interval that excludes 0 exactly when p < 0.05."""


class NotComparable(AssayError):
    """The runs asked different questions or searched different corpora."""


def run_identity(warehouse, run_id: str) -> dict:
    rows = warehouse.con.execute(
        "SELECT run_id, pipeline, config, judgments_hash, corpus_hash, started_at, seed FROM complete_runs "
        "WHERE run_id = ?", [run_id]).fetchall()
    rid, pipeline, config, jh, ch, started, seed = rows[0]
    return {"run_id": rid, "pipeline": pipeline, "config": json.loads(config), "judgments_hash": jh,
            "corpus_hash": ch, "started_at": started, "seed": seed}


_ABSENT = object()
ABSENT = "<absent>"  # how a setting or section one run lacks is shown


def config_diff(a: dict, b: dict, prefix: str = "") -> list[tuple[str, object, object]]:
    """(dotted key, value in a, value in b) for every setting that differs, sorted. A section present
    on one side only is one entry holding the whole section ("<absent>" on the other side)."""
    out = []
    for k in sorted(set(a) | set(b)):
        key = f"{prefix}.{k}" if prefix else str(k)
        va, vb = a.get(k, _ABSENT), b.get(k, _ABSENT)
        if isinstance(va, dict) and isinstance(vb, dict):
            out.extend(config_diff(va, vb, key))
        elif va != vb:
            out.append((key, ABSENT if va is _ABSENT else va, ABSENT if vb is _ABSENT else vb))
    return out


def describe_diff(diff) -> list[str]:
    if not diff:
        return ["configurations are identical"]
    fmt = lambda v: v if v == ABSENT else (json.dumps(v, sort_keys=True) if not isinstance(v, str) else repr(v))  # noqa: E731
    return [f"{k}: {fmt(va)} -> {fmt(vb)}" for k, va, vb in diff]


def check_comparable(a: dict, b: dict) -> None:
    problems = []
    if a["judgments_hash"] != b["judgments_hash"]:
        problems.append(f"judgments differ ({a['judgments_hash'][:12]} vs {b['judgments_hash'][:12]})")
    if a["corpus_hash"] != b["corpus_hash"]:
        problems.append(f"corpora differ ({a['corpus_hash'][:12]} vs {b['corpus_hash'][:12]})")
    if problems:
        lines = describe_diff(config_diff(a["config"], b["config"]))
        raise NotComparable(
            f"runs {a['run_id']} and {b['run_id']} are not comparable: {'; '.join(problems)}. "
            "Their questions or documents are not the same, so no paired comparison is meaningful. "
            "Configuration difference:\n  " + "\n  ".join(lines))


def metric_kind(measure) -> str:
    return "binary" if measure.family.interval == "wilson" else "continuous"


def paired_tests(warehouse, a: dict, b: dict, measures, slices: bool) -> list[dict]:
    """One row per (metric, level, slice): both values, delta, paired interval and paired test.

    The p-values are not adjusted: the caller decides which tests form one family for Holm. The pairs come from
    ``measure_values`` where stored, the measure SQL otherwise: read with SQL on a DuckDB source
    (assay.analytics.direct), as one Ibis expression on any other (assay.analytics.pairing); the intervals and
    the tests read them here, in question order. A slice holding every question reuses the "all" row.
    """
    rows, overall = [], {}
    for measure, level, name, as_all, before, after in paired_groups(warehouse, a, b, measures, slices):
        if as_all:
            row = dict(overall[(measure.name, level)], slice=name)
        else:
            row = inference_row(before, after)
            row = {"metric": measure.name, "level": level, "slice": name, **row}
        if name == "all":
            overall[(measure.name, level)] = row
        rows.append(row)
    return rows


def paired_groups(warehouse, a: dict, b: dict, measures, slices: bool) -> list[tuple]:
    """(measure, level, slice, same questions as "all", values of A, values of B) per (measure, level, slice),
    each side's values in question order."""
    from assay.analytics.direct import holds_duckdb, paired_values

    question_measures = [m for m in measures if m.family.unit == "question"]  # citations and claims do not pair
    pairs: dict[tuple, list] = {}
    if question_measures and holds_duckdb(warehouse):
        pairs = paired_values(warehouse, a["run_id"], b["run_id"], question_measures, slices)
    elif question_measures:
        from assay.analytics import opened
        from assay.analytics.pairing import paired

        with opened(warehouse) as (wh, con):
            fetched = con.to_pyarrow(paired(wh, con, a["run_id"], b["run_id"], question_measures, slices)).to_pylist()
        for p in fetched:
            pairs.setdefault((p["measure"], p["level"], p["slice"]), []).append((p["unit"], p["a"], p["b"]))
    groups = []  # (measure, level, slice, as "all", before, after): a slice holding every question reuses "all"
    for measure in question_measures:
        for level in measure.levels:
            names = sorted({s for (m, lvl, s) in pairs if m == measure.name and lvl == level},
                           key=lambda s: (s != "all", s))
            every = None
            for name in names:
                group = sorted(pairs[(measure.name, level, name)])
                units = [u for u, _, _ in group]
                if name == "all":
                    every = units
                groups.append((measure, level, name, units == every and name != "all",
                               [va for _, va, _ in group], [vb for _, _, vb in group]))
    return groups


def inference_row(before, after, alpha: float = ALPHA) -> dict:
    """Both means, the change B - A, and its two-sided ``1 - alpha`` interval and p-value from one paired
    score test inverted into its interval (assay.verdicts.inference): the interval excludes 0 exactly when
    p < alpha. With them the spread of the per-question changes and the minimum detectable change at this n
    (``mdc``, 80% power at ``alpha``; None and ``mdc_reason`` when there is none: assay.verdicts.power)."""
    from assay.verdicts.inference import infer
    from assay.verdicts.power import paired_mdc

    n = len(before)
    inf = infer(before, after, alpha=alpha)
    mdc = paired_mdc(before, after, alpha)
    return {"n": n, "a": sum(before) / n, "b": sum(after) / n, "delta": (sum(after) - sum(before)) / n,
            "ci_low": inf.low, "ci_high": inf.high, "test": inf.method,
            "p_value": inf.p_value, "sd_change": mdc["sd"], "mdc": mdc["mdc"], "mdc_reason": mdc["reason"]}


def paired_rows(warehouse, a: dict, b: dict, measures, slices: bool) -> list[dict]:
    """paired_tests, with p-values Holm-adjusted across the tests of each slice (`p_holm`, `n_tests`)."""
    from assay.verdicts.significance import holm

    rows = paired_tests(warehouse, a, b, measures, slices)
    for scope in {r["slice"] for r in rows}:
        scoped = [r for r in rows if r["slice"] == scope]
        for r, adj in zip(scoped, holm([r["p_value"] for r in scoped])):
            r["p_holm"] = adj
            r["n_tests"] = len(scoped)
    return rows


def first_relevant_ranks(warehouse, run_id: str, level: str) -> dict[str, int | None]:
    rows = warehouse.con.execute(
        "SELECT q.query_id, MIN(j.rank) FROM eval_questions q LEFT JOIN judged_ranking j "
        "ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.stage = 'final' AND j.level = ? AND j.gain > 0 "
        "WHERE q.run_id = ? AND q.answerable GROUP BY q.query_id", [level, run_id]).fetchall()
    return dict(rows)


def flips(warehouse, a: dict, b: dict, measure, level: str) -> dict:
    """Questions a hit measure (Success@k) counts differently: won (miss -> hit) and lost (hit -> miss)."""
    k = measure.k
    ra, rb = first_relevant_ranks(warehouse, a["run_id"], level), first_relevant_ranks(warehouse, b["run_id"], level)
    won, lost = [], []
    for q in sorted(set(ra) & set(rb)):
        hit_a = ra[q] is not None and ra[q] <= k
        hit_b = rb[q] is not None and rb[q] <= k
        if hit_a != hit_b:
            (won if hit_b else lost).append({"query_id": q, "rank_a": ra[q], "rank_b": rb[q]})
    return {"metric": measure.name, "level": level, "won": won, "lost": lost}


def compare(warehouse, run_a: str, run_b: str, measures=DEFAULT_MEASURES, flip_metric: str = "Success@3",
            flip_level: str = "doc") -> dict:
    a, b = run_identity(warehouse, run_a), run_identity(warehouse, run_b)
    check_comparable(a, b)
    rows = paired_rows(warehouse, a, b, measures, slices=True)
    result = {
        "a": {k: a[k] for k in ("run_id", "pipeline")}, "b": {k: b[k] for k in ("run_id", "pipeline")},
        "config_diff": [{"key": k, "a": va, "b": vb} for k, va, vb in config_diff(a["config"], b["config"])],
        "alpha": ALPHA,
        "rows": rows, "flips": flips(warehouse, a, b, parse_measure(flip_metric), flip_level),
        "units": _units(warehouse, a, b),
        "budgets": _budgets(warehouse, a, b, measures),
    }
    from assay.verdicts import verdict_text

    result["verdict"] = verdict_text.compare(result)
    return result


def _budgets(warehouse, a: dict, b: dict, measures) -> dict:
    """{measure: {"a": fields, "b": fields}} for each measure with a context budget: whether each run filled it
    (assay.measures.fill, over all answerable questions)."""
    from assay.measures import fill

    out = {}
    for m in measures:
        if m.budget is not None:
            out[m.name] = {side: fill.for_run(warehouse, run["run_id"], m.budget) for side, run in (("a", a), ("b", b))}
    return out


def _units(warehouse, a: dict, b: dict) -> dict:
    """Each run's retrieval unit, and the warning when they differ."""
    from assay.verdicts import units

    ua, ub = units.describe(warehouse, a["run_id"]), units.describe(warehouse, b["run_id"])
    return {"a": ua, "b": ub, "warning": units.differ(ua, ub)}


def _p(v: float) -> str:
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _mdc(row: dict) -> str:
    return "-" if row.get("mdc") is None else f"{row['mdc']:.3f}"


def _alpha(result: dict) -> str:
    return f"{result.get('alpha', ALPHA):g}"


def render(result: dict) -> str:
    from assay.core import tables
    from assay.core.escape import terminal as esc

    a, b = result["a"], result["b"]
    said = (result.get("verdict") or {}).get("sentence")
    out = [esc(said), ""] if said else []  # the verdict in words first
    out += [f"compare A {esc(a['run_id'])} ({esc(a['pipeline'])})  ->  B {esc(b['run_id'])} ({esc(b['pipeline'])})",
            "", "configuration difference:"] + ["  " + esc(line) for line in describe_diff(
               [(d["key"], d["a"], d["b"]) for d in result["config_diff"]])]
    if result.get("units", {}).get("warning"):
        out += ["", "WARNING: " + esc(result["units"]["warning"])]
    from assay.measures import fill

    budgets = result.get("budgets") or {}
    short = [(side, metric, fields) for metric, sides in budgets.items() for side, fields in sides.items()
             if fill.unfilled(fields)]
    marked = {metric for _, metric, _ in short}
    overall = [r for r in result["rows"] if r["slice"] == "all"]
    body = [[r["metric"] + (f" {fill.MARK}" if r["metric"] in marked else ""), r["level"], f"{r['a']:.3f}", f"{r['b']:.3f}", f"{r['delta']:+.3f}",
             f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]", r["test"], _p(r["p_value"]), _p(r["p_holm"]),
             str(r["n"]), _mdc(r)] for r in overall]
    heads = ["metric", "level", "A", "B", "change", "95% CI", "test", "p", "p (Holm)", "n", "MDC"]
    n_tests = overall[0]["n_tests"] if overall else 0
    out += ["", f"all questions: change = B - A; each 95% interval inverts the paired test beside it, so it "
                f"excludes 0 exactly when p < {_alpha(result)}; p (Holm) corrects p over the {n_tests} tests of this "
                f"table; MDC: the smallest true change this test finds 80% of the time at alpha {_alpha(result)} "
                "(- where n or the spread cannot tell):", "", tables.render(heads, body)]
    if short:
        n = overall[0]["n"] if overall else None
        out += [""] + fill.notes([{**fields, "metric": metric, "n": n, "side": side.upper()}
                                  for side, metric, fields in sorted(short, key=lambda s: s[0])],
                                 lambda r: f"{r['side']}: ")
        out.append(f"{fill.MARK} a question whose results hold fewer tokens than the budget is scored on all of them: "
                   "the figure is that of a smaller context.")
    f = result["flips"]
    out += ["", f"questions that flipped on {f['metric']} ({f['level']} level): {len(f['won'])} won, "
                f"{len(f['lost'])} lost (rank of the first relevant result in A and in B; - when none was retrieved)"]
    flips = [[tag, item["query_id"], "-" if item["rank_a"] is None else item["rank_a"],
              "-" if item["rank_b"] is None else item["rank_b"]]
             for tag, items in (("won", f["won"]), ("lost", f["lost"])) for item in items]
    if flips:
        # query ids may be all digits: they stay left-aligned
        out += ["", tables.render(["flip", "query_id", "rank in A", "rank in B"], flips,
                                  align=[None, "left", None, None])]
    headline = {("Success@3", "doc"), ("Success@10", "chunk"), ("nDCG@10", "chunk")}
    sliced = [r for r in result["rows"] if r["slice"] != "all" and (r["metric"], r["level"]) in headline]
    sbody = [[r["slice"], r["metric"], r["level"], str(r["n"]), f"{r['a']:.3f}", f"{r['b']:.3f}", f"{r['delta']:+.3f}",
              f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]", _p(r["p_value"]), _p(r["p_holm"])] for r in sliced]
    out += ["", "by slice (headline metrics; each interval inverts its p; p (Holm) corrects p within each slice "
                "over all its tests):", "",
            tables.render(["slice", "metric", "level", "n", "A", "B", "change", "95% CI", "p", "p (Holm)"], sbody),
            "", "JSON output (--format json) has every metric for every slice."]
    return "\n".join(out) + "\n"
