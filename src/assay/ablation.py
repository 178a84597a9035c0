"""The ablation ladder: one golden set, the standard pipelines, one table.

Rungs: BM25 only (the baseline every feature is measured against), dense only,
+ lexical with RRF (hybrid), + rerank, and a deliberately weakened pipeline
(dense only, top 3). Every rung is a stored run. A rung whose model is not
available is reported as skipped, with the reason, instead of failing the ladder.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from assay.errors import ModelNotAvailable
from assay.metrics.compute import per_query
from assay.metrics.registry import parse_measure
from assay.metrics.stats import bootstrap_mean, paired_bootstrap_delta, wilson

LADDER = (
    ("bm25", "BM25 only (baseline)"),
    ("dense", "dense only"),
    ("hybrid", "+ lexical, RRF"),
    ("hybrid-rerank", "+ rerank"),
    ("dense-top3", "weakened: dense only, top 3"),
)
HEADLINE = (("Success@1", "doc"), ("Success@3", "doc"), ("Success@10", "chunk"), ("R@10", "chunk"),
            ("nDCG@10", "chunk"))
FUNNEL = ("found", "retrieval", "fusion", "rerank", "abstained", "cutoff")


@dataclass
class Rung:
    pipeline: str
    label: str
    run_id: str | None = None
    skipped: str | None = None
    metrics: dict = field(default_factory=dict)  # (metric, level) -> {value, n, ci_low, ci_high, per_query}
    deltas: dict = field(default_factory=dict)  # (metric, level) -> {delta, ci_low, ci_high}
    funnel: dict = field(default_factory=dict)


def _measure_rung(warehouse, rung: Rung, seed: int) -> None:
    for name, level in HEADLINE:
        measure = parse_measure(name)
        values = {q: v for (q, lvl), v in per_query(warehouse, rung.run_id, measure).items() if lvl == level}
        vals = [values[q] for q in sorted(values)]
        if measure.family.interval == "wilson":
            low, high = wilson(sum(vals), len(vals))
        else:
            low, high = bootstrap_mean(vals, seed=seed)
        rung.metrics[(name, level)] = {"value": sum(vals) / len(vals), "n": len(vals), "ci_low": low,
                                       "ci_high": high, "per_query": values}
    _, rows = warehouse.query("reports/loss_funnel", run_id=rung.run_id)
    rung.funnel = dict(rows)


def ablate(warehouse, corpus_dir, judgments_path, options, progress=None) -> list[Rung]:
    from assay.runner import execute_run

    say = progress or (lambda msg: None)
    rungs = []
    for pipeline, label in LADDER:
        rung = Rung(pipeline, label)
        say(f"-- {label} ({pipeline})")
        try:
            record = execute_run(corpus_dir, judgments_path, replace(options, pipeline=pipeline), say,
                                 warehouse=warehouse)
        except ModelNotAvailable as exc:
            rung.skipped = str(exc)
            say(f"skipped: {exc}")
        else:
            warehouse.write_run(record)
            rung.run_id = record.run_id
            _measure_rung(warehouse, rung, record.config["seed"])
        rungs.append(rung)
    base = rungs[0]
    for rung in rungs[1:]:
        if rung.skipped:
            continue
        for key, m in rung.metrics.items():
            b = base.metrics[key]
            qids = sorted(b["per_query"])
            low, high = paired_bootstrap_delta([b["per_query"][q] for q in qids],
                                               [m["per_query"][q] for q in qids], seed=options.seed or 0)
            rung.deltas[key] = {"delta": m["value"] - b["value"], "ci_low": low, "ci_high": high}
    return rungs


def weakened_verdict(rungs: list[Rung]) -> str:
    """Whether the deliberately weakened rung is visibly worse: a headline metric whose paired
    95% interval on the delta against the baseline lies wholly below zero."""
    weak = next(r for r in rungs if r.pipeline == "dense-top3")
    if weak.skipped:
        return "the weakened row was skipped, so the ladder has no sanity check"
    worse = [f"{m} ({lvl}) {d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"
             for (m, lvl), d in weak.deltas.items() if d["ci_high"] < 0]
    if worse:
        return "sanity check passed: the weakened pipeline is visibly worse than the baseline on " + "; ".join(worse)
    return ("WARNING: the weakened pipeline is NOT visibly worse than the baseline on any headline metric "
            "(every paired 95% interval reaches zero or above); this golden set may be too small or too easy "
            "to tell a broken pipeline from a working one")


def to_json(rungs: list[Rung]) -> dict:
    out = []
    for r in rungs:
        out.append({
            "pipeline": r.pipeline, "label": r.label, "run_id": r.run_id, "skipped": r.skipped,
            "metrics": [{"metric": m, "level": lvl, **{k: v for k, v in d.items() if k != "per_query"},
                         **({"delta": r.deltas[(m, lvl)]} if (m, lvl) in r.deltas else {})}
                        for (m, lvl), d in r.metrics.items()],
            "funnel": r.funnel,
        })
    return {"rungs": out, "verdict": weakened_verdict(rungs)}


def render(rungs: list[Rung]) -> str:
    from assay.report import _grid

    heads = [f"{m} ({lvl})" for m, lvl in HEADLINE]
    values, deltas, funnel = [], [], []
    for r in rungs:
        if r.skipped:
            values.append([r.label, "skipped"] + [""] * (len(HEADLINE)))
            deltas.append([r.label] + [""] * len(HEADLINE))
            funnel.append([r.label] + [""] * len(FUNNEL))
            continue
        n = r.metrics[HEADLINE[0]]["n"]
        values.append([r.label, str(n)] + [f"{d['value']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}]"
                                           for d in (r.metrics[k] for k in HEADLINE)])
        if r.deltas:
            deltas.append([r.label] + [f"{d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"
                                       for d in (r.deltas[k] for k in HEADLINE)])
        else:
            deltas.append([r.label] + ["baseline"] * len(HEADLINE))
        funnel.append([r.label] + [str(r.funnel.get(k, 0)) for k in FUNNEL])
    parts = ["Ablation ladder (values with 95% intervals; n = answerable questions)", "",
             _grid(["pipeline", "n"] + heads, values, False), "",
             "Delta against the BM25 baseline (paired bootstrap 95% interval over the same questions)", "",
             _grid(["pipeline"] + heads, deltas, False), "",
             "Loss funnel: where each answerable question lost every gold passage", "",
             _grid(["pipeline"] + list(FUNNEL), funnel, False), ""]
    skipped = [r for r in rungs if r.skipped]
    for r in skipped:
        parts.append(f"skipped {r.label}: {r.skipped}")
    parts.append(weakened_verdict(rungs))
    runs = ", ".join(f"{r.pipeline}={r.run_id}" for r in rungs if r.run_id)
    parts.append(f"runs: {runs}")
    return "\n".join(parts) + "\n"
