"""The ablation ladder: one golden set, a ladder of pipelines, one table, and a sanity check that can fail.

Rungs: BM25 only (the baseline every feature is measured against), dense only,
+ lexical with RRF (hybrid), + rerank, and a deliberately weakened pipeline
(dense only, top 3); or the rungs of ``[ablate]`` in assay.toml. Every rung is a
stored run. A rung whose model (or the extra it needs) is not available is reported as skipped, with the
reason, instead of failing the ladder.

The weakened rung is the ladder's check on the check. With gate rules, every rung
is held to them, and a weakened rung that passes every rule means the gates would
not catch a broken pipeline: exit code 6. A rule with no value on the weakened rung
(an empty slice, an answer measure on a pipeline without an answer stage) neither
catches it nor counts as lenient. Without rules, the weakened rung must be visibly
worse than the baseline on some ranking measure, else exit code 6 too. Every rung's
change against the baseline gets the one paired inference `assay compare` uses
(assay.verdicts.inference: a score test, McNemar's for 0/1 measures, and the 95%
interval that inverts it); "visibly worse" is a negative change whose p-value, Holm-adjusted
over the ranking measures measured on the weakened rung (one family), is below 0.05.
When the check cannot run (the weakened
rung or the baseline was skipped, or no rule has a value), that is said and the
exit code stays 0: nothing was measured, so nothing can be claimed about the gates,
and the missing model is already named on the skipped rung.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from assay.core.errors import ConfigError, ExtraMissing, ModelNotAvailable
from assay.verdicts.gate import GATE_FAILED, check
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.measures.stats import bootstrap_mean, wilson

LADDER = (
    ("bm25", "BM25 only (baseline)", False),
    ("dense", "dense only", False),
    ("hybrid", "+ lexical, RRF", False),
    ("hybrid-rerank", "+ rerank", False),
    ("dense-top3", "weakened: dense only, top 3", True),
)
RANKING = (("Success@1", "doc"), ("Success@3", "doc"), ("Success@10", "chunk"), ("R@10", "chunk"),
           ("nDCG@10", "chunk"))
# Shown with their deltas, but not part of the sanity check: BM25 returns nothing when no term matches and
# dense retrieval never does, so any dense rung "differs" from a BM25 baseline on them whether weakened or not.
ABSTENTION = (("Abstain", "query"), ("FalseAbstain", "query"))
HEADLINE = RANKING + ABSTENTION
FUNNEL = ("found", "retrieval", "fusion", "rerank", "abstained", "cutoff")
ALPHA = 0.05
"""The level of every rung's paired interval, and of the sanity check's Holm-corrected family."""
RUNG_KEYS = ("pipeline", "label", "weakened")


@dataclass
class Rung:
    pipeline: str
    label: str
    weakened: bool = False
    run_id: str | None = None
    skipped: str | None = None
    metrics: dict = field(default_factory=dict)  # (metric, level) -> {value, n, ci_low, ci_high, per_query}
    deltas: dict = field(default_factory=dict)  # (metric, level) -> {delta, ci_low, ci_high}
    funnel: dict = field(default_factory=dict)
    gate: list = field(default_factory=list)  # assay.verdicts.gate.check results, one per rule


@dataclass
class Verdict:
    """The sanity check: ``status`` is caught or lenient (with rules), worse or not worse (without),
    or not run; ``exit_code`` is 0 or 6."""

    status: str
    exit_code: int
    message: str
    caught: list = field(default_factory=list)  # rules the weakened rung fails, on a measured value
    lenient: list = field(default_factory=list)  # rules the weakened rung passes
    unmeasured: list = field(default_factory=list)  # rules with no value on the weakened rung
    worse: list = field(default_factory=list)  # without rules: headline deltas wholly on the worse side


def ladder_from(config: dict) -> list[tuple[str, str, bool]]:
    """The ``[ablate] rungs`` of assay.toml as (pipeline, label, weakened), else the built-in LADDER."""
    table = config.get("ablate")
    if table is None:
        return list(LADDER)
    where = f"{config.get('_path', 'assay.toml')}: [ablate]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table with rungs = [...], not {type(table).__name__}")
    unknown = set(table) - {"rungs"}
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}; allowed: rungs")
    rungs = table.get("rungs")
    if not isinstance(rungs, list) or not rungs:
        raise ConfigError(f"{where} needs rungs = [{{ pipeline = \"bm25\", label = \"baseline\" }}, ...], "
                          "the first the baseline and exactly one with weakened = true")
    from assay.retrieval.pipelines import pipeline_names
    from assay.retrieval.external import plugin_names

    known = pipeline_names(config) + plugin_names()
    ladder = []
    for i, rung in enumerate(rungs, 1):
        at = f"{where} rung {i}"
        if not isinstance(rung, dict):
            raise ConfigError(f"{at} is not a table; write {{ pipeline = \"bm25\", label = \"...\" }}")
        unknown = set(rung) - set(RUNG_KEYS)
        if unknown:
            raise ConfigError(f"{at} has unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(RUNG_KEYS)}")
        pipeline = rung.get("pipeline")
        if not isinstance(pipeline, str) or not pipeline:
            raise ConfigError(f"{at} has no pipeline; give pipeline = \"NAME\" (one of {', '.join(known)})")
        if pipeline not in known:
            raise ConfigError(f"{at}: unknown pipeline {pipeline!r}; available: {', '.join(known)}")
        label = rung.get("label", pipeline)
        weakened = rung.get("weakened", False)
        if not isinstance(label, str) or not label:
            raise ConfigError(f"{at}: label must be a non-empty string")
        if not isinstance(weakened, bool):
            raise ConfigError(f"{at}: weakened must be true or false, got {weakened!r}")
        ladder.append((pipeline, label, weakened))
    labels = [label for _, label, _ in ladder]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ConfigError(f"{where}: label(s) used by more than one rung: {', '.join(map(repr, twice))}")
    weak = [i for i, (_, _, w) in enumerate(ladder, 1) if w]
    if len(weak) != 1:
        found = "none has" if not weak else f"rungs {', '.join(map(str, weak))} have"
        raise ConfigError(f"{where}: exactly one rung must be the weakened one (weakened = true); {found} it")
    if weak == [1]:
        raise ConfigError(f"{where}: the first rung is the baseline and cannot be the weakened one; "
                          "put the weakened rung after it")
    return ladder


def measure_rung(warehouse, rung: Rung, seed: int) -> None:
    for name, level in HEADLINE:
        measure = parse_measure(name)
        values = {q: v for (q, lvl), v in per_query(warehouse, rung.run_id, measure).items() if lvl == level}
        vals = [values[q] for q in sorted(values)]
        if not vals:  # e.g. Abstain on a set without no_answer questions: not computed, never 0
            rung.metrics[(name, level)] = {"value": None, "n": 0, "ci_low": None, "ci_high": None, "per_query": {}}
            continue
        if measure.family.interval == "wilson":
            low, high = wilson(sum(vals), len(vals))
        else:
            low, high = bootstrap_mean(vals, seed=seed)
        rung.metrics[(name, level)] = {"value": sum(vals) / len(vals), "n": len(vals), "ci_low": low,
                                       "ci_high": high, "per_query": values}
    _, rows = warehouse.query("reports/loss_funnel", run_id=rung.run_id)
    rung.funnel = dict(rows)


def ablate(warehouse, corpus_dir, judgments_path, options, progress=None, ladder=LADDER, rules=()) -> list[Rung]:
    """Run every rung of ``ladder`` ((pipeline, label, weakened), the first the baseline), measure it,
    and check it against ``rules`` (assay.verdicts.gate rules; none: only the paired-delta sanity check)."""
    from assay.core import progress as shown

    import secrets
    from datetime import datetime, timezone

    say = progress or (lambda msg: None)
    warehouse.check_writable()  # before the first rung, not at its write (assay.store.warehouse.check_writable)
    rungs = []
    # every rung's stats name this ladder, so `assay history` keeps rungs out of a pipeline's history (as a sweep's
    # points, which carry their sweep_id)
    ablation_id = f"ablation-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    with shown.task("ablation rungs", total=len(ladder), unit="rungs") as task:
        for pipeline, label, weakened in ladder:
            rungs.append(_rung(warehouse, corpus_dir, judgments_path, options, pipeline, label, weakened, rules, say,
                               ablation_id))
            task.advance()
    base = rungs[0]
    if base.skipped:
        return rungs
    for rung in rungs[1:]:
        if not rung.skipped:
            measure_deltas(base, rung)
    return rungs


def measure_deltas(base: Rung, rung: Rung) -> None:
    """``rung.deltas``: each measure's change against ``base`` over the questions both have values for."""
    for key, m in rung.metrics.items():
        b = base.metrics[key]
        qids = sorted(set(b["per_query"]) & set(m["per_query"]))
        if b["value"] is None or m["value"] is None or not qids:
            continue
        rung.deltas[key] = paired_change([b["per_query"][q] for q in qids], [m["per_query"][q] for q in qids])


def paired_change(before: list[float], after: list[float]) -> dict:
    """The change ``after - before`` over the same questions, with the 95% interval and p-value of one paired
    inference (assay.verdicts.inference): the interval excludes 0 exactly when p < 0.05."""
    from assay.verdicts.inference import infer

    inf = infer(before, after, alpha=ALPHA)
    return {"delta": inf.change, "ci_low": inf.low, "ci_high": inf.high, "p_value": inf.p_value, "test": inf.method}


def _rung(warehouse, corpus_dir, judgments_path, options, pipeline, label, weakened, rules, say,
          ablation_id=None) -> Rung:
    """One rung run, stored and measured (or skipped when its model is not available)."""
    from assay.runs.runner import execute_run

    rung = Rung(pipeline, label, weakened)
    say(f"-- {label} ({pipeline})")
    try:
        record = execute_run(corpus_dir, judgments_path, replace(options, pipeline=pipeline), say,
                             warehouse=warehouse)
    except (ModelNotAvailable, ExtraMissing) as exc:  # as a rung whose model is missing: the others still run
        rung.skipped = str(exc)
        say(f"warning: skipped: {exc}")
    else:
        record.stats["ablation"] = {"ablation_id": ablation_id, "label": label, "weakened": weakened}
        from assay.runs.sinks import store_run

        store_run(warehouse, record)
        rung.run_id = record.run_id
        measure_rung(warehouse, rung, record.config["seed"])
        if rules:
            rung.gate = check(warehouse, record.run_id, list(rules), seed=record.config["seed"],
                              samples=record.config.get("bootstrap_samples", 1000))
    return rung


def verdict(rungs: list[Rung], rules=()) -> Verdict:
    """Whether the weakened rung is caught: by a gate rule it fails (with rules), or by a ranking measure on
    which it is worse than the baseline, its paired p-value Holm-adjusted over the ranking measures measured on
    it below ALPHA (``sanity_family``)."""
    weak = next(r for r in rungs if r.weakened)
    if weak.skipped:
        return Verdict("not run", 0, f"sanity check could not run: the weakened rung ({weak.label}) was skipped, "
                                     "so nothing shows whether these checks would catch a broken pipeline")
    if rules:
        return _rules_verdict(weak)
    if rungs[0].skipped:
        return Verdict("not run", 0, f"sanity check could not run: the baseline ({rungs[0].label}) was skipped, "
                                     "so there are no deltas to judge the weakened rung by")
    family = sanity_family(weak)
    worse = [f"{m} ({lvl}) {d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] p {_p(d['p_value'])}, "
             f"Holm {_p(d['p_holm'])}" for (m, lvl), d in family if d["worse"]]
    held = (f"paired score tests (McNemar's for 0/1 measures), Holm-corrected over the {len(family)} "
            f"ranking measure(s) measured on it, at {ALPHA:g}")
    if worse:
        return Verdict("worse", 0, "sanity check passed: the weakened pipeline is visibly worse than the baseline on "
                       + "; ".join(worse) + f" ({held})", worse=worse)
    return Verdict("not worse", GATE_FAILED,
                   "sanity check FAILED: the weakened pipeline is NOT visibly worse than the baseline on any "
                   f"ranking measure (none is below it with Holm's p < {ALPHA:g}; {held}); this golden set may be "
                   f"too small or too easy to tell a broken pipeline from a working one; exit code {GATE_FAILED}")


def sanity_family(weak: Rung) -> list[tuple[tuple[str, str], dict]]:
    """The weakened rung's ranking measures with a delta, each with its Holm-adjusted p (``p_holm``, over these
    measures as one family) and whether it shows the rung worse: a negative change with ``p_holm < ALPHA``."""
    from assay.verdicts.family import correct

    tested = [(key, weak.deltas[key]) for key in RANKING if key in weak.deltas]
    out = []
    for (key, d), fam in zip(tested, correct([d["p_value"] for _, d in tested], ALPHA, "holm")):
        out.append((key, {**d, "p_holm": fam["p_adjusted"], "worse": d["delta"] < 0 and fam["p_adjusted"] < ALPHA}))
    return out


def _p(v: float) -> str:
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _rules_verdict(weak: Rung) -> Verdict:
    caught = [r for r in weak.gate if not r["passed"] and r["value"] is not None]
    lenient = [r for r in weak.gate if r["passed"]]
    unmeasured = [r for r in weak.gate if r["value"] is None]
    if caught:
        return Verdict("caught", 0, f"sanity check passed: the weakened rung ({weak.label}) fails "
                       f"{len(caught)} of the {len(caught) + len(lenient)} gate rule(s) measured on it",
                       caught, lenient, unmeasured)
    if lenient:
        return Verdict("lenient", GATE_FAILED,
                       f"sanity check FAILED: the weakened rung ({weak.label}) passes every gate rule it could be "
                       f"measured on, so these gates would not catch a broken pipeline; exit code {GATE_FAILED}",
                       caught, lenient, unmeasured)
    return Verdict("not run", 0, f"sanity check could not run: no gate rule could be measured on the weakened rung "
                                 f"({weak.label})", caught, lenient, unmeasured)


def _verdict_lines(v: Verdict, rungs: list[Rung]) -> list[str]:
    """The verdict, then each gate rule's part in it as a table (cells escaped there)."""
    from assay.core.escape import terminal
    from assay.core.tables import render as grid

    stronger = [r for r in rungs if not r.weakened and not r.skipped]
    rows = []
    for r in v.caught:
        also = [s.label for s in stronger if not next(g for g in s.gate if g["rule"] == r["rule"])["passed"]]
        note = ""
        if stronger and len(also) == len(stronger):
            note = "; but it fails every other rung too, so it tells no rung apart"
        elif also:
            note = f"; it also fails {', '.join(also)}"
        rows.append(["caught by", r["rule"], r["reason"] + note])
    rows += [["too lenient", r["rule"], r["reason"]] for r in v.lenient]
    rows += [["not measured", r["rule"], r["reason"]] for r in v.unmeasured]
    lines = [terminal(v.message)]
    if rows:
        lines += [""] + grid(["check", "gate rule", "on the weakened rung"], rows).splitlines()
    return lines


def to_json(rungs: list[Rung], rules=()) -> dict:
    v = verdict(rungs, rules)
    out = []
    for r in rungs:
        out.append({
            "pipeline": r.pipeline, "label": r.label, "weakened": r.weakened, "run_id": r.run_id,
            "skipped": r.skipped,
            "metrics": [{"metric": m, "level": lvl, **{k: v for k, v in d.items() if k != "per_query"},
                         **({"delta": r.deltas[(m, lvl)]} if (m, lvl) in r.deltas else {})}
                        for (m, lvl), d in r.metrics.items()],
            "funnel": r.funnel,
            "gate": r.gate,
        })
    weak = next(r for r in rungs if r.weakened)
    # without rules, the family the check corrected over (Holm across the weakened rung's ranking measures)
    family = [] if rules or weak.skipped else [
        {"metric": m, "level": lvl, **{k: d[k] for k in ("delta", "ci_low", "ci_high", "p_value", "p_holm", "worse")}}
        for (m, lvl), d in sanity_family(weak)]
    return {"rungs": out, "rules": [rule.text for rule in rules], "verdict": v.message,
            "sanity": {"status": v.status, "exit_code": v.exit_code, "caught": [r["rule"] for r in v.caught],
                       "lenient": [r["rule"] for r in v.lenient], "not_measured": [r["rule"] for r in v.unmeasured],
                       "worse": v.worse, "alpha": ALPHA, "correction": "holm", "family": family}}


def _cell(d: dict | None, fmt: str) -> str:
    """A value or delta with its interval; '-' for a value not computed, '' for a delta not computed."""
    if d is None:
        return ""
    return "-" if "value" in d and d["value"] is None else fmt.format(**d)


def _change(d: dict | None) -> str:
    """A change with its interval and p; '' where not computed."""
    return "" if d is None else f"{d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] p {_p(d['p_value'])}"


def render(rungs: list[Rung], rules=()) -> str:
    from assay.core.escape import terminal as esc
    from assay.core.tables import render as grid

    heads = [f"{m} ({lvl})" for m, lvl in HEADLINE]
    values, deltas, funnel, gates = [], [], [], []
    for r in rungs:
        if r.skipped:
            values.append([r.label, "skipped"] + [""] * len(HEADLINE))
            deltas.append([r.label] + [""] * len(HEADLINE))
            funnel.append([r.label] + [""] * len(FUNNEL))
            gates.append([r.label, "skipped"] + [""] * (len(rules) - 1))
            continue
        n = r.metrics[HEADLINE[0]]["n"]
        values.append([r.label, str(n)] + [_cell(r.metrics[k], "{value:.3f} [{ci_low:.3f}, {ci_high:.3f}]")
                                           for k in HEADLINE])
        if r is rungs[0]:
            deltas.append([r.label] + ["baseline"] * len(HEADLINE))
        else:
            deltas.append([r.label] + [_change(r.deltas.get(k)) for k in HEADLINE])
        funnel.append([r.label] + [str(r.funnel.get(k, 0)) for k in FUNNEL])
        gates.append([r.label] + [("PASS" if g["passed"] else "FAIL") + (" (fragile)" if g["fragile"] else "") +
                                  (" -" if g["value"] is None else f" {g['value']:.3f}") for g in r.gate])
    no_answer = max((r.metrics[("Abstain", "query")]["n"] for r in rungs if not r.skipped), default=0)
    parts = [f"Ablation ladder (values with 95% intervals; n = answerable questions; Abstain is over the "
             f"{no_answer} no_answer questions)", "",
             grid(["pipeline", "n"] + heads, values), "",
             f"Change against the first rung, {esc(rungs[0].label)}, over the same questions: the 95% interval "
             "inverts the paired test whose p follows it (a score test; McNemar's for 0/1 measures), so it excludes "
             "0 exactly when p < 0.05; p is not corrected here",
             "", grid(["pipeline"] + heads, deltas), "",
             "Loss funnel: where each answerable question lost every gold passage", "",
             grid(["pipeline"] + list(FUNNEL), funnel), ""]
    if rules:
        parts += ["Gate rules on every rung (fragile: passes, but not significantly; Holm over each rung's rules at "
                  "alpha 0.05, as in assay gate)",
                  "", grid(["pipeline"] + [rule.text for rule in rules], gates), ""]
    for r in rungs:
        if r.skipped:
            parts.append(f"skipped {esc(r.label)}: {esc(r.skipped)}")
    parts += _verdict_lines(verdict(rungs, rules), rungs)
    runs = ", ".join(f"{esc(r.pipeline)}={esc(r.run_id)}" for r in rungs if r.run_id)
    parts.append(f"runs: {runs}")
    return "\n".join(parts) + "\n"
