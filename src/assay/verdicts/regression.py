"""`assay regress` and `assay history`: a run against its past.

regress: the candidate run is compared with a baseline picked from history among
comparable runs (same judgments and corpus) of the same pipeline: ``latest`` (the
newest before the candidate), ``best`` (the highest on the first guarded metric),
or a run id. A change is B - A (candidate - baseline); a drop is a negative change.
In significance mode (the default) a check regresses when its change is
significantly below -allowance (one-sided paired test, Holm over every measure,
level and slice checked); in threshold mode when its change is below -allowance.
Exit code 7 when anything regresses.

A candidate or a named baseline that did not complete (status failed or blocked)
fails with exit code 8; ``latest`` as the baseline steps over such runs and names
them in the result (``skipped``). See assay.store.run_status.

history: a metric across a pipeline's own runs over time (a sweep's points, an
ablation's rungs and derived runs only when asked), and the first run where a
lasting drop began: the earliest run from which no later run came back to within
``tolerance`` of the best value before it, when the runs from it on are also
significantly below the baseline window before it (assay.verdicts.drop_test).
"""

from __future__ import annotations

import re

from assay.verdicts.comparison import check_comparable, paired_groups, run_identity
from assay.verdicts.drop_test import KINDS
from assay.core.errors import ConfigError, RunNotFound
from assay.measures.registry import MEASURE_TEXT, parse_measure

SAMPLES = 1000  # bootstrap resamples of a history point's interval (a report's default: runs store theirs so)

REGRESSED = 7
_DROP = re.compile(rf"^\s*(?P<metric>{MEASURE_TEXT})(?::(?P<level>chunk|doc|query|answer))?\s*=\s*(?P<drop>\d+(?:\.\d+)?)\s*$")


def parse_drop(text: str) -> tuple[object, str, float]:
    m = _DROP.match(text)
    if not m:
        raise ConfigError(f"cannot read --max-drop {text!r}; write it like 'Success@1=0.02' or 'nDCG@10:doc=0.03'")
    measure = parse_measure(m.group("metric"))
    levels = measure.levels
    level = m.group("level") or ("chunk" if "chunk" in levels else levels[0])
    if level not in levels:
        raise ConfigError(f"--max-drop {text!r}: {measure.name} has level(s) {', '.join(levels)}")
    return measure, level, float(m.group("drop"))


def _means(warehouse, run_ids, measure, level, pipeline=None) -> dict[str, float]:
    """Each run's mean of ``measure`` at ``level`` (NaN for a run without values). ``pipeline``: the runs' own,
    whose stored values a DuckDB source reads in one query (assay.analytics.direct)."""
    from assay.analytics.direct import holds_duckdb, pipeline_values

    if pipeline is not None and holds_duckdb(warehouse):
        by_run = pipeline_values(warehouse, pipeline, measure, level, only=run_ids)[1]
    else:
        from assay.analytics import opened
        from assay.analytics.history import series

        with opened(warehouse) as (wh, con):
            by_run = _values_by_run(con.to_pyarrow(series(wh, con, run_ids, measure, level)))
    means = {}
    for run_id in run_ids:
        values = by_run.get(run_id, [])
        means[run_id] = sum(values) / len(values) if values else float("nan")
    return means


def pick_baseline(warehouse, candidate: dict, how: str, guard) -> str:
    _, rows = warehouse.query("reports/comparable_runs", run_id=candidate["run_id"], pipeline=candidate["pipeline"])
    history = [r[0] for r in rows if r[0] != candidate["run_id"]]
    if how not in ("latest", "best"):
        from assay.store.run_status import resolve_checked

        return resolve_checked(warehouse, how, "using it as the baseline")
    if how == "latest":
        earlier = [r[0] for r in rows if (r[1], r[0]) < (candidate["started_at"], candidate["run_id"])]
        if not earlier:
            raise RunNotFound(f"no comparable {candidate['pipeline']} run before {candidate['run_id']} to use as "
                              "the baseline; record one first or give --baseline RUN_ID")
        return earlier[-1]
    if not history:
        raise RunNotFound(f"no other comparable {candidate['pipeline']} run to use as the baseline")
    measure, level, _ = guard
    means = _means(warehouse, history, measure, level, candidate["pipeline"])
    return max(history, key=lambda r: (means[r], r))


MODES = ("significance", "threshold")


def regress(warehouse, run_id: str, baseline: str, drops: list, alpha: float = 0.05, mode: str = "significance",
            correction: str = "holm") -> dict:
    """Check each guarded (measure, level) overall and in every slice; a change is B - A (candidate minus
    baseline), a drop a negative change, and ``--max-drop M=a`` guards "change >= -a".

    - ``mode="significance"`` (the default): a check fails only when the change is significantly below -a: a
      one-sided paired test of H0 "change >= -a" (assay.verdicts.inference), decided at the level the family
      correction gives it over every distinct (measure, level, slice) checked. Its interval is the matching
      one-sided one at that same level, ``[-1, upper]``: it lies wholly below -a exactly when the check fails.
    - ``mode="threshold"``: a check fails when the change is below -a, whatever its significance; the two-sided
      95% interval and p of "change = 0" are shown for information only, uncorrected.
    """
    if not drops:
        raise ConfigError("give at least one --max-drop, e.g. --max-drop Success@1=0.02")
    from assay.core.limits import ALPHA
    from assay.verdicts.family import CORRECTIONS

    if ALPHA.problem(alpha):
        raise ConfigError(f"--alpha {ALPHA.problem(alpha)}")
    if mode not in MODES:
        raise ConfigError(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    if correction not in CORRECTIONS:
        raise ConfigError(f"--correction {correction!r}: choose one of {', '.join(CORRECTIONS)}")
    candidate = run_identity(warehouse, run_id)
    base_id = pick_baseline(warehouse, candidate, baseline, drops[0])
    from assay.store.run_status import incomplete_between

    skipped = [{k: r[k] for k in ("run_id", "status", "reason")}
               for r in incomplete_between(warehouse, candidate, base_id)] if baseline == "latest" else []
    base = run_identity(warehouse, base_id)
    check_comparable(base, candidate)
    measures = list(dict.fromkeys(m for m, _, _ in drops))
    allowed = {(m.name, lvl): d for m, lvl, d in drops}
    groups = [g for g in paired_groups(warehouse, base, candidate, measures, slices=True)
              if (g[0].name, g[1]) in allowed]
    checks = _checks(groups, allowed, alpha, mode, correction)
    family = sum(not c["same_as_all"] for c in checks)
    result = {"candidate": run_id, "baseline": base_id, "baseline_rule": baseline, "alpha": alpha, "mode": mode,
              "correction": correction if mode == "significance" else "none", "family_size": family,
              "checks": checks, "regressed": any(c["regressed"] for c in checks), "skipped": skipped,
              "budgets": _budgets(warehouse, base, candidate, measures)}
    from assay.verdicts import verdict_text

    result["verdict"] = verdict_text.regress(result)
    return result


def _budgets(warehouse, base: dict, candidate: dict, measures) -> dict:
    """{measure: {"baseline": fields, "candidate": fields}} for each guarded measure with a context budget
    (assay.measures.fill): a run that cannot fill it is judged on a smaller context."""
    from assay.verdicts.comparison import _budgets as both

    return {m: {"baseline": f["a"], "candidate": f["b"]} for m, f in both(warehouse, base, candidate, measures).items()}


def _checks(groups, allowed, alpha, mode, correction) -> list[dict]:
    """One check per group: the change and its inference; the decision by ``mode``."""
    from assay.verdicts.family import correct
    from assay.verdicts.inference import infer
    from assay.verdicts.power import paired_mdc

    checks, dists, overall = [], {}, {}
    for measure, level, name, as_all, before, after in groups:
        allowance = allowed[(measure.name, level)]
        c = {"metric": measure.name, "level": level, "slice": name, "same_as_all": as_all, "n": len(before),
             "a": sum(before) / len(before), "b": sum(after) / len(after),
             "change": (sum(after) - sum(before)) / len(before), "max_drop": allowance,
             "null": 0.0 - allowance}  # 0.0 - 0.0 is 0.0, where -0.0 would print as -0.000
        if not as_all:
            dists[len(checks)] = (before, after)
        checks.append(c)
    tested = sorted(dists)
    if mode == "significance":
        raw = {i: infer(*dists[i], alpha=alpha, alternative="less", null=checks[i]["null"]).p_value for i in tested}
        decided = dict(zip(tested, correct([raw[i] for i in tested], alpha, correction)))
    else:
        decided = {i: {"level": alpha, "p_adjusted": None, "rejected": None} for i in tested}
    for i in tested:
        c, d = checks[i], decided[i]
        if mode == "significance":
            inf = infer(*dists[i], alpha=d["level"], alternative="less", null=c["null"])
            regressed = inf.p_value < d["level"]
        else:
            inf = infer(*dists[i], alpha=alpha)
            regressed = c["change"] < c["null"]
        # what this check could find: one-sided at the level it was decided at (significance), else two-sided
        mdc = paired_mdc(*dists[i], alpha=d["level"], sides=1 if mode == "significance" else 2)
        c.update({"ci_low": inf.low, "ci_high": inf.high, "confidence": 1 - inf.alpha,
                  "alternative": inf.alternative, "tested_null": inf.null, "p_value": inf.p_value,
                  "p_adjusted": d["p_adjusted"], "decided_at": d["level"], "method": inf.method,
                  "regressed": regressed, "mdc": mdc["mdc"],
                  "mdc_reason": mdc["reason"]})
        if c["slice"] == "all":
            overall[(c["metric"], c["level"])] = c
    for c in checks:
        if c["same_as_all"]:  # the same questions as "all": the same hypothesis, decided once
            c.update({k: v for k, v in overall[(c["metric"], c["level"])].items()
                      if k not in ("slice", "same_as_all")})
    for c in checks:
        c["family_size"] = len(tested) if mode == "significance" else None
        c["decision"] = "regressed" if c["regressed"] else "ok"
    return checks


def render_regress(result: dict) -> str:
    from assay.core.escape import terminal as esc
    from assay.core.tables import render as grid

    significance = result["mode"] == "significance"
    ordered = sorted(result["checks"], key=lambda c: (not c["regressed"], c["slice"] != "all", c["slice"],
                                                      c["metric"]))
    rows = []
    for c in ordered:
        interval = (f"<= {c['ci_high']:+.3f} ({100 * c['confidence']:.4g}%)" if significance
                    else f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]")
        row = ["REGRESSED" if c["regressed"] else "ok", f"{c['metric']}:{c['level']}", c["slice"], f"{c['a']:.3f}",
               f"{c['b']:.3f}", f"{c['change']:+.3f}", f"{c['null']:+.3f}", interval]
        row += [_p(c["p_value"]), _p(c["p_adjusted"])] if significance else [_p(c["p_value"])]
        rows.append(row + [c["n"]])
    n = sum(c["regressed"] for c in result["checks"])
    from assay.verdicts.family import NAMES as names

    if significance:
        rule = (f"significance mode: a check fails when its change (candidate - baseline) is significantly below "
                f"its floor (-allowance): one-sided paired test, {names[result['correction']]} over "
                f"{result['family_size']} checks at alpha {result['alpha']:g}; each bound is the one-sided interval "
                f"at the level that check was decided at, below the floor exactly when it fails")
        heads = ["status", "measure", "slice", "baseline", "candidate", "change", "floor", "bound", "p",
                 f"p ({names[result['correction']]})" if result["correction"] != "none" else "p (uncorrected)", "n"]
    else:
        rule = (f"threshold mode: a check fails when its change (candidate - baseline) is below its floor "
                f"(-allowance), whatever its significance; the 95% interval and p (change = 0, uncorrected) are "
                f"shown for information only ({result['family_size']} checks)")
        heads = ["status", "measure", "slice", "baseline", "candidate", "change", "floor", "95% CI (info)",
                 "p (info)", "n"]
    verdict = f"{n} regression(s); exit code {REGRESSED}" if n else (
        "0 regression(s): no significant regression" if significance else "0 regression(s): no change below its floor")
    from assay.measures import fill

    n_all = next((c["n"] for c in result["checks"] if c["slice"] == "all"), None)
    short = fill.notes([{**fields, "metric": metric, "n": n_all, "side": side}
                        for side in ("baseline", "candidate")
                        for metric, sides in (result.get("budgets") or {}).items() for fields in [sides[side]]],
                       lambda r: f"{r['side']}: ")
    said = (result.get("verdict") or {}).get("sentence")
    return "\n".join(([esc(said), ""] if said else []) + [
        f"regress: candidate {esc(result['candidate'])} against baseline {esc(result['baseline'])} "
        f"(--baseline {esc(result['baseline_rule'])})", rule, grid(heads, rows), *short, verdict]) + "\n"


def _p(v) -> str:
    return "-" if v is None else "<0.0001" if v < 0.0001 else f"{v:.4f}"


def run_kind(row: dict) -> str:
    """``run`` for a pipeline's own run, else what made it: a derived run's kind (rescore, revalidate), a sweep's
    point, an ablation's rung."""
    if row.get("kind") in ("rescore", "revalidate"):
        return row["kind"]
    if row.get("sweep_id"):
        return "sweep"
    if "ablation_id" not in row and row.get("stats"):  # read through Ibis: the stats JSON as stored
        import json

        stats = row["stats"] if isinstance(row["stats"], dict) else json.loads(row["stats"])
        row["ablation_id"] = (stats.get("ablation") or {}).get("ablation_id")
    if row.get("ablation_id"):
        return "ablation"
    return "run"


def history(warehouse, pipeline: str, metric: str, level: str | None, slice_: str = "all",
            tolerance: float = 0.02, include=(), window: int | None = None, alpha: float | None = None) -> dict:
    """A measure over a pipeline's runs, oldest first, and where a lasting drop began: a drop is lasting when the
    tolerance rule (``lasting_drop``) finds one and the runs from it on are significantly below the baseline window
    before it (``assay.verdicts.drop_test``). ``include``: kinds of run (``KINDS``) shown besides the pipeline's own runs;
    the others are counted in ``excluded``."""
    from assay.verdicts import drop_test
    from assay.core.limits import TOLERANCE
    from assay.measures import fill

    if TOLERANCE.problem(tolerance):
        raise ConfigError(f"--tolerance {TOLERANCE.problem(tolerance)}")
    unknown = sorted(set(include) - set(KINDS))
    if unknown:
        raise ConfigError(f"--include {', '.join(unknown)}: not a kind of run; known: {', '.join(KINDS)}")
    window = drop_test.WINDOW if window is None else window
    alpha = drop_test.ALPHA if alpha is None else alpha
    if not isinstance(window, int) or window < 1:
        raise ConfigError(f"--baseline-window must be a whole number of runs, at least 1, got {window!r}")
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha!r}")
    measure = parse_measure(metric)
    level = level or ("chunk" if "chunk" in measure.levels else measure.levels[0])
    points, values, excluded = _history_points(warehouse, pipeline, measure, level, slice_, set(include))
    groups = sorted({(p["judgments_hash"], p["corpus_hash"]) for p in points})
    latest_group = (points[-1]["judgments_hash"], points[-1]["corpus_hash"]) if points else None
    series = [p for p in points if (p["judgments_hash"], p["corpus_hash"]) == latest_group]
    candidate = lasting_drop(series, tolerance)
    test = None
    if candidate:
        start = next(i for i, p in enumerate(series) if p["run_id"] == candidate["run_id"])
        test = {"candidate": candidate, **drop_test.drop_test(series, values, start, window, series[start]["seed"],
                                                              alpha)}
    from assay.store.run_status import outcomes

    incomplete = [{k: r[k] for k in ("run_id", "status", "reason")} for r in reversed(outcomes(warehouse))
                  if r["pipeline"] == pipeline and r["status"] != "complete"]
    for p in points:
        del p["seed"]
        # Whether each run filled the measure's context budget over the slice's questions (metrics.fill): a run
        # that could not is scored on a smaller context, so its point is not the budget's figure.
        p.update(fill.for_run(warehouse, p["run_id"], measure.budget, slice_) if measure.budget
                 else dict.fromkeys(fill.FIELDS))
    return {"pipeline": pipeline, "metric": measure.name, "level": level, "slice": slice_, "tolerance": tolerance,
            "points": points, "comparable_groups": len(groups),
            "lasting_drop": candidate if test and test["significant"] else None, "drop_test": test,
            "alpha": alpha, "baseline_window": window, "included": sorted(include), "excluded": excluded,
            "incomplete": incomplete}


def lasting_drop(series: list[dict], tolerance: float) -> dict | None:
    """The earliest point from which no later point came back to within ``tolerance`` of the best value before it
    (the first point holding that value), in one pass each way; None when there is none."""
    later = []  # later[i]: the best value from point i on
    for p in reversed(series):
        later.append(max(p["value"], later[-1]) if later else p["value"])
    later.reverse()
    prior_best = None
    for i in range(1, len(series)):
        if prior_best is None or series[i - 1]["value"] > prior_best["value"]:
            prior_best = series[i - 1]
        if later[i] < prior_best["value"] - tolerance:
            return {"run_id": series[i]["run_id"], "value": series[i]["value"], "prior_best": prior_best["value"],
                    "prior_best_run": prior_best["run_id"]}
    return None


def _history_points(warehouse, pipeline: str, measure, level: str, slice_: str, include=frozenset()):
    """One point per run with values in the slice: the mean and interval of its per-question values; with each
    point's values (``{run_id: values}``) and how many runs of each kind not in ``include`` were left out.

    The runs and the values in the slice come from ``measure_values`` where stored, the measure SQL otherwise:
    read with SQL on a DuckDB source (assay.analytics.direct), as Ibis expressions on any other
    (assay.analytics.history). The mean and the interval are computed here over the values in question order,
    seeded with each run's seed, exactly as ``evaluate`` computes them for `assay report`."""
    from assay.analytics.direct import holds_duckdb, pipeline_values

    if holds_duckdb(warehouse):
        rows, by_run = pipeline_values(warehouse, pipeline, measure, level, slice_)
    else:
        from assay.analytics import opened
        from assay.analytics.history import ordered_runs, series

        with opened(warehouse) as (wh, con):
            rows = ordered_runs(con, pipeline)
            expr = series(wh, con, [r["run_id"] for r in rows], measure, level, slice_) if rows else None
            by_run = _values_by_run(con.to_pyarrow(expr)) if expr is not None else {}
    if not rows:
        raise RunNotFound(f"no runs of pipeline {pipeline!r} in {warehouse.path}")
    excluded: dict[str, int] = {}
    for r in rows:
        kind = run_kind(r)
        if kind != "run" and kind not in include:
            excluded[kind] = excluded.get(kind, 0) + 1
    rows = [r for r in rows if by_run.get(r["run_id"]) and run_kind(r) in {"run", *include}]
    values = [by_run[r["run_id"]] for r in rows]
    bounds = _bounds(warehouse, values, measure.family.interval, [r["seed"] for r in rows])
    points = [{"run_id": r["run_id"], "started_at": r["started_at"].isoformat(timespec="seconds"),
               "kind": run_kind(r), "judgments_hash": r["judgments_hash"], "corpus_hash": r["corpus_hash"],
               "value": sum(vals) / len(vals), "n": len(vals), "ci_low": low, "ci_high": high, "seed": r["seed"]}
              for r, vals, (low, high) in zip(rows, values, bounds)]
    return points, {r["run_id"]: vals for r, vals in zip(rows, values)}, dict(sorted(excluded.items()))


def _bounds(warehouse, values: list[list[float]], kind: str, seeds: list) -> list[tuple[float, float]]:
    """Each run's interval: the one the interval memo holds for exactly these values, seed and kind (a run's
    report stored it as the run was written: assay.measures.memo), computed for the rest, the same floats either
    way. A history of 1,000 runs spent half its time in the bootstraps a memo already held."""
    from assay.measures import memo
    from assay.measures.stats import intervals

    keys = [memo.memo_key(vals, kind, seed, SAMPLES) for vals, seed in zip(values, seeds)]
    known = memo.recall(warehouse, keys)
    todo = [i for i, key in enumerate(keys) if key not in known]
    computed = dict(zip(todo, intervals([values[i] for i in todo], kind, [seeds[i] for i in todo], SAMPLES)))
    return [computed[i] if i in computed else known[key] for i, key in enumerate(keys)]


def _values_by_run(table) -> dict[str, list[float]]:
    """``{run_id: values}`` of a ``run_id, unit, value`` Arrow table, each run's values in unit order (UTF-8 bytes
    sort as Python sorts strings)."""
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return {}
    table = table.take(pc.sort_indices(table, [("run_id", "ascending"), ("unit", "ascending")]))
    runs, values = table.column("run_id").to_pylist(), table.column("value").to_pylist()
    by_run: dict[str, list[float]] = {}
    start = 0
    for end in range(1, len(runs) + 1):
        if end == len(runs) or runs[end] != runs[start]:
            by_run[runs[start]] = values[start:end]
            start = end
    return by_run


def render_history(h: dict) -> str:
    from assay.core.escape import terminal as esc
    from assay.measures import fill
    from assay.core.tables import render as grid

    lines = [f"history of {h['metric']} ({h['level']}, slice {esc(h['slice'])}) for pipeline {esc(h['pipeline'])}"]
    if h["comparable_groups"] > 1:
        lines.append(f"note: these runs span {h['comparable_groups']} different judgment/corpus sets; the drop "
                     "search uses only the runs comparable with the newest one")
    excluded = h.get("excluded") or {}
    if excluded:
        left = ", ".join(f"{n} {kind}" for kind, n in excluded.items())
        lines.append(f"note: not shown: {left} run(s) of this pipeline (--include {','.join(excluded)} or "
                     "--all-kinds shows them)")
    kinds = any(p.get("kind", "run") != "run" for p in h["points"])
    heads = ["run", "started"] + (["kind"] if kinds else []) + ["value", "95% CI", "n", ""]
    lines.append(grid(heads, [[p["run_id"], p["started_at"]] + ([p["kind"]] if kinds else [])
                              + [f"{p['value']:.3f}" + (f" {fill.MARK}" if fill.unfilled(p) else ""),
                                 f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}]", p["n"],
                                 "#" * int(round(p["value"] * 40))] for p in h["points"]]))
    short = fill.notes([{**p, "metric": h["metric"]} for p in h["points"]], lambda p: f"run {esc(p['run_id'])}: ")
    if short:
        lines += short + [f"{fill.MARK} a question whose results hold fewer tokens than the budget is scored on all "
                          "of them: the figure is that of a smaller context."]
    d, t = h["lasting_drop"], h.get("drop_test")
    if d:
        lines.append(f"a lasting drop began at run {esc(d['run_id'])} ({d['value']:.3f}; best before it "
                     f"{d['prior_best']:.3f} at {esc(d['prior_best_run'])}): no later run came back within {h['tolerance']:g}")
    elif t:
        c = t["candidate"]
        lines.append(f"no lasting drop: from run {esc(c['run_id'])} on no run came back within {h['tolerance']:g} of "
                     f"the best before it ({c['prior_best']:.3f} at {esc(c['prior_best_run'])}), but the fall is not "
                     f"significant")
    else:
        lines.append(f"no lasting drop (tolerance {h['tolerance']:g})")
    if t:
        lines.append(_test_sentence(t))
    return "\n".join(lines) + "\n"


def _test_sentence(t: dict) -> str:
    """What the significance test of a candidate drop compared, found and needs, in words."""
    from assay.core.escape import terminal as esc

    runs = len(t["baseline_runs"])
    over = "questions" if t["test"].startswith("paired") else "values"
    verdict = "<" if t["significant"] else ">="
    return (f"test: the {len(t['drop_runs'])} run(s) from {esc(t['drop_runs'][0])} on ({t['drop_mean']:.3f}) against "
            f"the baseline window of the {runs} run(s) before it ({t['baseline_mean']:.3f}): change {t['delta']:+.3f}, "
            f"p = {t['p_value']:.4f} {verdict} alpha {t['alpha']:g} ({t['test']} test over {t['n']} {over}, one-sided, "
            f"{t['resamples']} resamples, seed {t['seed']})")
