"""A verdict in words: the one or two sentences that open report, compare, regress, gate and sweep (text, Markdown
and HTML alike), and the same verdict as JSON fields.

Every function here reads figures already computed (the dicts ``comparison.compare``, ``regression.regress``,
``gate.check``, ``sweep.table`` and ``report.build_report`` return) and computes nothing new but the wording: the
sentence cannot say what the table does not. The rules:

- A change is B - A (candidate - baseline); a drop is negative.
- A comparison says "better" or "worse" exactly when its paired interval excludes 0 (which is exactly when its own
  p < alpha: assay.verdicts.inference); otherwise "cannot be told from", or "the same at every question" when no
  question changed. A correction over a table's tests is quoted beside it, and said when it undoes the verdict.
- The slice singled out is the one (of at least ``MIN_SLICE`` questions) with the largest change in the verdict's
  direction, and only when it goes further than the change over all questions.
- The minimum detectable change (assay.verdicts.power) closes each verdict: changes smaller than it would be missed
  more than one time in five.

Which figure the sentence is about (docs/reports.md, "The verdict in words"): report and compare lead with the
first of ``HEADLINES`` present (did a passage that answers the question reach the top 3?), or the first measure
asked for with ``-m``; regress with its first failing check, else the one closest to failing; gate with its
failing rules, else its fragile ones; sweep with its best point and how many points cannot be told from it.
"""

from __future__ import annotations

HEADLINES = (("Success@3", "chunk"), ("Success@3", "doc"), ("Success@10", "chunk"), ("nDCG@10", "chunk"))
"""The measure report and compare lead with: the first of these present."""
UNITS_DIFFER = (("Success@3", "doc"), ("nDCG@10", "doc"), ("SpanRecall@1000tok", "chunk"))
"""The same when the runs rank different units (chunk sizes, whole documents): measures that do not favour the
larger unit."""
MIN_SLICE = 5
"""A slice smaller than this is not singled out: its interval says almost nothing."""
RANKING = ("chunk", "doc")


# -- choosing the figure -------------------------------------------------------------------
def pick(rows: list[dict], chosen: list[str] | None = None, headlines=HEADLINES) -> dict | None:
    """The "all" row the verdict is about: with ``chosen`` (measure names asked for, in order), the first of them
    present (its chunk level first; its document level first when ``headlines`` is ``UNITS_DIFFER``, since the
    runs rank different units); else the first of ``headlines``; else the first ranking measure's."""
    overall = {(r["metric"], r["level"]): r for r in rows if r.get("slice", "all") == "all" and r.get("n")}
    levels = ("doc", "chunk") if headlines is UNITS_DIFFER else ("chunk", "doc")
    order = [(m, lvl) for m in chosen or () for lvl in levels + ("query", "answer")]
    for key in order or headlines:
        if key in overall:
            return overall[key]
    if order:
        return None
    return next((r for (_, level), r in overall.items() if level in RANKING), None)


def label(metric: str, level: str) -> str:
    return f"{metric} ({level})"


def _p(v: float | None) -> str:
    return "p not computed" if v is None else "p < 0.001" if v < 0.001 else f"p = {v:.3f}"


def _n(n: int, what: str = "question") -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def direction(change: float, low: float, high: float, sd: float | None) -> str:
    """better / worse when the interval of the change excludes 0; same when no question changed; else none."""
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if sd == 0 and change == 0:
        return "same"
    return "no detectable difference"


def mdc_of(row: dict, alpha: float, sides: int) -> dict | None:
    """The MDC a row carries (``mdc``, ``mdc_reason``: assay.verdicts.power), as ``_mdc_sentence`` reads it."""
    from assay.verdicts.power import POWER

    if "mdc" not in row:
        return None
    return {"mdc": row["mdc"], "reason": row.get("mdc_reason"), "n": row["n"], "power": POWER, "alpha": alpha,
            "sides": sides}


def _mdc_sentence(mdc: dict | None, what: str = "changes", tail: str = "", note: str = "") -> str:
    if not mdc:
        return ""
    if mdc.get("mdc") is None:
        return f" No minimum detectable change: {mdc['reason']}."
    sides = "" if mdc.get("sides", 2) == 2 else ", one-sided"
    return (f" With {_n(mdc['n'])}, {what} smaller than {mdc['mdc']:.3f} cannot be told from noise "
            f"({100 * mdc['power']:.0f}% power at alpha {mdc['alpha']:.2g}{sides}{note}){tail}.")


def _extreme_slice(slices: list[dict], change: float, down: bool, key: str = "delta") -> dict | None:
    """The slice with the largest change in the direction (``down``: most negative), past ``change``."""
    rows = [s for s in slices if s.get("slice", "all") != "all" and s["n"] >= MIN_SLICE and s.get(key) is not None]
    if not rows:
        return None
    top = min(rows, key=lambda s: (s[key] if down else -s[key], s["slice"]))
    beyond = top[key] < change if down else top[key] > change
    return {"slice": top["slice"], "change": top[key], "n": top["n"]} if beyond else None


# -- a paired comparison (compare, report RUN RUN, HTML) -------------------------------------
def comparison(row: dict, a: str = "A", b: str = "B", slices: list[dict] = (), family: dict | None = None,
               alpha: float = 0.05) -> dict:
    """The verdict of one paired comparison. ``row``: an ``inference_row`` (n, a, b, delta, ci_low, ci_high,
    p_value, test, sd_change, mdc) with metric and level; ``slices``: the same measure's rows in each slice;
    ``family``: ``{"correction", "size", "p_adjusted"}`` when the table corrects its tests together."""
    change, low, high = row["delta"], row["ci_low"], row["ci_high"]
    way = direction(change, low, high, row.get("sd_change"))
    what = label(row["metric"], row["level"])
    figures = (f"from {row['a']:.3f} to {row['b']:.3f}; 95% CI of the change {low:+.3f} to {high:+.3f}, "
               f"{_p(row['p_value'])}")
    if family and family.get("p_adjusted") is not None:
        name = {"holm": "Holm", "bonferroni": "Bonferroni"}.get(family["correction"], family["correction"])
        figures += f"; {name} over {_n(family['size'], 'test')}: {_p(family['p_adjusted'])}"
        if way in ("better", "worse") and family["p_adjusted"] >= alpha:
            figures += f", not below {alpha:g} once corrected"
    if way == "same":
        said = f"{b} and {a} score the same on {what} at every one of the {_n(row['n'])} ({row['a']:.3f})."
    elif way == "no detectable difference":
        said = f"{b} cannot be told from {a} on {what}: the change is {change:+.3f} ({figures})."
    else:
        said = f"{b} is {way} than {a} on {what} by {abs(change):.3f} ({figures})"
    worst = _extreme_slice(list(slices), change, way == "worse") if way in ("better", "worse") else None
    if way in ("better", "worse"):
        if worst:
            said += (f"; the largest {'loss' if way == 'worse' else 'gain'} is in {worst['slice']} questions "
                     f"({worst['change']:+.3f} over {worst['n']})")
        said += "."
    mdc = mdc_of(row, alpha, 2)
    said += _mdc_sentence(mdc)
    return {"sentence": said, "direction": way, "measure": row["metric"], "level": row["level"], "a": row["a"],
            "b": row["b"], "change": change, "ci_low": low, "ci_high": high, "confidence": 1 - alpha,
            "p": row["p_value"], "test": row.get("test"), "alpha": alpha,
            "correction": (family or {}).get("correction"), "family_size": (family or {}).get("size"),
            "p_adjusted": (family or {}).get("p_adjusted"), "n": row["n"], "mdc": mdc.get("mdc"),
            "mdc_power": mdc.get("power"), "mdc_reason": mdc.get("reason"), "worst_slice": worst}


def compare(result: dict) -> dict | None:
    """The verdict of ``comparison.compare``'s result on its headline measure."""
    overall = [r for r in result["rows"] if r["slice"] == "all"]
    head = pick(overall, headlines=UNITS_DIFFER if (result.get("units") or {}).get("warning") else HEADLINES)
    if head is None:
        return None
    slices = [r for r in result["rows"] if (r["metric"], r["level"]) == (head["metric"], head["level"])]
    family = {"correction": "holm", "size": head.get("n_tests"), "p_adjusted": head.get("p_holm")}
    alpha = result.get("alpha", 0.05)
    verdict = comparison(head, "A", "B", slices, family, alpha)
    # the headline is one measure of the table: any other whose change survives the table's correction is named,
    # so the sentence never reads "cannot be told apart" over a table that shows a significant change
    others = [r for r in overall if r is not head and r.get("p_holm") is not None and r["p_holm"] < alpha]
    verdict["also_significant"] = [{"measure": r["metric"], "level": r["level"], "change": r["delta"],
                                    "ci_low": r["ci_low"], "ci_high": r["ci_high"], "p_adjusted": r["p_holm"]}
                                   for r in others]
    if others:
        named = [f"{label(r['metric'], r['level'])} {r['delta']:+.3f} (Holm {_p(r['p_holm'])})" for r in others[:3]]
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        verdict["sentence"] += (f" Elsewhere in the table, {len(others)} other change{'s' if len(others) > 1 else ''} "
                                f"{'survive' if len(others) > 1 else 'survives'} Holm's correction: "
                                f"{', '.join(named)}{more}.")
    return verdict


# -- one run (report) ------------------------------------------------------------------------
def _rate_k(metric: str) -> int | None:
    """k when ``metric`` is a 0/1 measure with a rank cutoff (Success@3: 3), else None."""
    from assay.core.errors import ConfigError
    from assay.measures.registry import parse_measure

    try:
        m = parse_measure(metric)
    except ConfigError:  # a name the registry does not know (a user's measure since removed): said as a number
        return None
    # only Success says "a relevant result in the top k": a user's 0/1 measure (Hits@1) is said as a number
    return m.cutoff if m.family.name == "Success" and m.cutoff is not None and m.budget is None else None


def pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def interval_words(row: dict, rate: bool) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return "no interval"
    if rate:
        return f"95% interval {pct(row['ci_low'])} to {pct(row['ci_high'])}"
    return f"95% interval {row['ci_low']:.3f} to {row['ci_high']:.3f}"


def hits(row: dict) -> int:
    return round(row["value"] * row["n"])


def _what(level: str, k: int) -> str:
    if level == "doc":
        return "a relevant document first" if k == 1 else f"a relevant document among their top {k} documents"
    return ("a relevant chunk (one overlapping a gold passage) first" if k == 1
            else f"a relevant chunk (one overlapping a gold passage) in their top {k} results")


def run(rows: list[dict], head: dict | None, mdc: dict | None) -> dict | None:
    """One run's verdict on ``head`` (its "all" row): the figure with its interval, the lowest slice, and the MDC
    a paired comparison at this n would have if its per-question changes varied as much as this run's values."""
    if head is None:
        return None
    k, n = _rate_k(head["metric"]), head["n"]
    if k is not None:
        said = (f"Of the {_n(n, 'answerable question')}, {hits(head)} had {_what(head['level'], k)} "
                f"({pct(head['value'])}; {interval_words(head, True)})")
    else:
        said = (f"Over the {_n(n, 'answerable question')}, {head['metric']} at {head['level']} level is "
                f"{head['value']:.3f} ({interval_words(head, False)})")
    low = lowest_slice(rows, head)
    if low is not None:
        figure = (f"{hits(low)} of {low['n']}, {pct(low['value'])}" if k is not None
                  else f"{low['value']:.3f} over {low['n']} questions")
        said += f"; the lowest slice is {low['slice']} ({figure})"
    said += "."
    said += _mdc_sentence(mdc, "changes against another run",
                          ", if the per-question changes varied as much as this run's values; compare runs question "
                          "by question (assay report RUN_A RUN_B), not by their intervals")
    return {"sentence": said, "measure": head["metric"], "level": head["level"], "value": head["value"],
            "ci_low": head["ci_low"], "ci_high": head["ci_high"], "n": n,
            "lowest_slice": None if low is None else {"slice": low["slice"], "value": low["value"], "n": low["n"]},
            "sd_of_values": None if mdc is None else mdc["sd"],
            "mdc_if_changes_vary_like_values": None if mdc is None else mdc["mdc"],
            "mdc_power": None if mdc is None else mdc["power"], "alpha": None if mdc is None else mdc["alpha"],
            "mdc_reason": None if mdc is None else mdc["reason"]}


def lowest_slice(rows: list[dict], head: dict) -> dict | None:
    """The lowest slice (of at least ``MIN_SLICE`` questions) on the headline measure, when it is below the
    run's overall value."""
    cands = [r for r in rows if r["metric"] == head["metric"] and r["level"] == head["level"]
             and r.get("slice", "all") != "all" and r["value"] is not None and r["n"] >= MIN_SLICE]
    if len(cands) < 2:
        return None
    low = min(cands, key=lambda r: (r["value"], r["slice"]))
    return low if low["value"] < head["value"] else None


# -- regress -----------------------------------------------------------------------------------
def regress(result: dict) -> dict:
    """The verdict of ``regression.regress``: its first failing check (in the table's order), else the check over all
    questions closest to failing, with the largest fall among that measure's slices."""
    checks = result["checks"]
    significance = result["mode"] == "significance"
    # a slice holding every question repeats its "all" check (same_as_all): counted once, as the family counts it
    failed = [c for c in checks if c["regressed"] and not c.get("same_as_all")]
    ordered = sorted(failed, key=lambda c: (c["slice"] != "all", c["slice"], c["metric"]))
    overall = [c for c in checks if c["slice"] == "all"]
    # with no failure, the check over all questions closest to failing: the smallest p (significance mode), the
    # change nearest its floor (threshold mode); ties to the first guarded
    closest = (min(overall, key=lambda c: c["p_value"]) if significance
               else min(overall, key=lambda c: c["change"] - c["null"]))
    head = ordered[0] if ordered else closest
    size = result["family_size"]
    where = "" if head["slice"] == "all" else f" in {head['slice']} questions"
    what = f"{label(head['metric'], head['level'])}{where}"
    from assay.verdicts.family import NAMES as names

    move = f"from {head['a']:.3f} to {head['b']:.3f}"
    if significance:
        adjusted = "" if result["correction"] == "none" else f", {head['p_adjusted']:.3f} after the correction"
        figures = (f"one-sided {100 * head['confidence']:.4g}% bound {head['ci_high']:+.3f}, {_p(head['p_value'])}"
                   f"{adjusted}, {names[result['correction']]} over {_n(size, 'check')} at alpha {result['alpha']:g}")
        if failed:
            said = (f"The candidate regressed on {len(failed)} of {_n(size, 'check')}: {what} changed by "
                    f"{head['change']:+.3f} ({move}), significantly below its floor {head['null']:+.3f} ({figures}).")
        else:
            said = (f"No regression: no check is significantly below its floor ({names[result['correction']]} over "
                    f"{_n(size, 'check')} at alpha {result['alpha']:g}); {what} changed by {head['change']:+.3f} "
                    f"({move}; "
                    f"one-sided {100 * head['confidence']:.4g}% bound {head['ci_high']:+.3f} against the floor "
                    f"{head['null']:+.3f}, {_p(head['p_value'])}{adjusted})")
    else:
        figures = f"95% CI {head['ci_low']:+.3f} to {head['ci_high']:+.3f}, {_p(head['p_value'])}, for information"
        if failed:
            said = (f"The candidate regressed on {len(failed)} of {_n(size, 'check')} (threshold mode: the change "
                    f"alone decides): {what} changed by {head['change']:+.3f} ({move}), below its floor "
                    f"{head['null']:+.3f} ({figures}).")
        else:
            said = (f"No regression: no change is below its floor in {_n(size, 'check')} (threshold mode); {what} "
                    f"changed by {head['change']:+.3f} ({move}; {figures})")
    worst = None
    if not failed:
        same = [c for c in checks if (c["metric"], c["level"]) == (head["metric"], head["level"])]
        worst = _extreme_slice(same, head["change"], True, key="change")
        if worst is not None and worst["change"] >= 0:
            worst = None
        if worst:
            said += (f"; the largest fall is in {worst['slice']} questions ({worst['change']:+.3f} over "
                     f"{worst['n']})")
        said += "."
    mdc = mdc_of(head, head["decided_at"] if significance else result["alpha"], 1 if significance else 2)
    if significance:
        said += _mdc_sentence(mdc, "falls past the floor", note=", the level this check was decided at")
    else:
        said += _mdc_sentence(mdc, "changes", "; a fall past the floor smaller than that may be noise")
    return {"sentence": said, "decision": "regressed" if failed else "ok", "mode": result["mode"],
            "correction": result["correction"], "family_size": size, "failed": len(failed),
            "measure": head["metric"], "level": head["level"], "slice": head["slice"], "a": head["a"],
            "b": head["b"], "change": head["change"], "floor": head["null"], "ci_low": head["ci_low"],
            "ci_high": head["ci_high"], "confidence": head["confidence"], "p": head["p_value"],
            "p_adjusted": head["p_adjusted"], "n": head["n"], "mdc": None if mdc is None else mdc["mdc"],
            "mdc_power": None if mdc is None else mdc["power"], "mdc_reason": None if mdc is None else mdc["reason"],
            "worst_slice": worst}


# -- gate ----------------------------------------------------------------------------------------
def gate(results: list[dict]) -> dict:
    """The verdict of ``gate.check``'s results: the failing rules, else the fragile ones, in the table's words."""
    failed = [r for r in results if not r["passed"]]
    fragile = [r for r in results if r["passed"] and r["fragile"]]
    total = len(results)
    first = results[0] if results else {}
    size, correction, alpha = first.get("family_size"), first.get("correction"), first.get("alpha")

    def one(r: dict) -> str:
        if r["value"] is None:
            return f"{r['rule']} ({r['reason']})"
        # n counts what the measure is over: questions, or citations and claims for answer measures
        return f"{r['rule']} reads {r['value']:.3f} (95% CI {r['ci_low']:.3f} to {r['ci_high']:.3f}, n = {r['n']})"

    if failed:
        said = f"The run fails {len(failed)} of {_n(total, 'gate rule')}: " + "; ".join(one(r) for r in failed) + "."
    else:
        said = f"The run passes all {_n(total, 'gate rule')}" if total != 1 else "The run passes its one gate rule"
        if fragile:
            some = ", but" if total == 1 else f"; {len(fragile)} pass" + ("es" if len(fragile) == 1 else "")
            said += (f"{some} only on the point estimate (fragile): "
                     + "; ".join(f"{r['rule']} ({r['reason']})" for r in fragile))
            if size == 1:
                said += f"; one-sided test at alpha {alpha:g}"
            elif size:  # fragile is a corrected one-sided test (gate.check): say over how many rules
                names = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "uncorrected"}
                said += (f"; one-sided tests, {names.get(correction, correction)} over {_n(size, 'rule')} at alpha "
                         f"{alpha:g}")
        said += "."
    return {"sentence": said, "decision": "fail" if failed else "pass", "rules": total, "failed": len(failed),
            "fragile": len(fragile), "failing_rules": [r["rule"] for r in failed],
            "fragile_rules": [r["rule"] for r in fragile], "correction": correction, "family_size": size,
            "alpha": alpha}


# -- sweep -----------------------------------------------------------------------------------------
def sweep(result: dict) -> dict:
    """The verdict of ``sweep.table``: the best point and how many others cannot be told from it."""
    points = result["points"]
    best = next(p for p in points if p["point"] == result["best"])
    others = [p for p in points if p is not best]
    same = [p for p in others if p["verdict"] == "indistinguishable"]
    cell = best["select"]
    said = (f"Point {best['point']} ({best['label']}, {best['pipeline']}) is best on {result['select']} "
            f"({cell['value']:.3f}; 95% interval {cell['ci_low']:.3f} to {cell['ci_high']:.3f})")
    alpha = result["spec"]["alpha"]
    if not others:
        said += "; the sweep has no other point to compare it with."
    elif same:
        said += (f"; {len(same)} of the {len(others)} other points cannot be told from it (Holm over "
                 f"{len(others)} tests at alpha {alpha:g}): point" + ("s " if len(same) > 1 else " ")
                 + ", ".join(str(p["point"]) for p in same) + ".")
    else:
        said += (f"; every one of the {len(others)} other points is worse (Holm over {len(others)} tests at "
                 f"alpha {alpha:g}).")
    mdcs = [p["mdc"] for p in others if p.get("mdc") is not None]
    n = result["n_questions"]
    if mdcs:
        low, high = min(mdcs), max(mdcs)
        span = f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"{low:.3f} to {high:.3f}"
        said += (f" With {_n(n)}, differences from the best smaller than {span} cannot be told from noise "
                 f"(80% power at alpha {alpha:g}, before the correction).")
    elif others:
        reasons = [p.get("mdc_reason") for p in others if p.get("mdc_reason")]
        if reasons:
            said += f" No minimum detectable change: {reasons[0]}."
    return {"sentence": said, "best": best["point"], "measure": result["select"], "value": cell["value"],
            "ci_low": cell["ci_low"], "ci_high": cell["ci_high"], "others": len(others),
            "indistinguishable": [p["point"] for p in same], "correction": "holm", "family_size": len(others),
            "alpha": alpha, "n": n, "mdc_low": min(mdcs) if mdcs else None, "mdc_high": max(mdcs) if mdcs else None}
