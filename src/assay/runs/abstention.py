"""`assay calibrate`: fit a Platt calibration on a stored run, store it, and describe it.

The fit is on each question's top final score (label 1 answerable, 0 no_answer),
with in-sample and held-out figures (see assay.retrieval.calibration). The stored artifact
carries the fit set's hash, the in-sample caveat and what it was fitted on: the
pipeline, the stage, the score identity (what produced the scores, see
``score_identity``) and the judgments hash. `assay run --calibration ID` applies
it: below the threshold the pipeline returns nothing. A run whose scores come
from something else is refused (``check_applies``): a curve fitted on cosines
says nothing about BM25 sums.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone

from assay.retrieval.calibration import calibrate
from assay.core.errors import ConfigError
from assay.core.hashing import canonical_json

# The fields of a stage's stored config that set its score scale (None: the whole config).
# A reranker's top_n only chooses which candidates it scores, not the scale of a score.
_SCALE_FIELDS = {"rerank": ("model", "onnx_sha256")}


def score_identity(config: dict) -> dict:
    """What produced a run's final scores, from its stored config (``runs.config``).

    ``{"stage": S, "config": C}``, where S is the last stage of the pipeline that
    gives hits their scores and C is what sets that stage's score scale:

    - ``rerank`` when the pipeline reranks: the cross-encoder's model name and
      ONNX SHA-256 (not ``top_n``, which chooses candidates, not their scale);
    - else ``fusion`` when two lists are fused: the method with its ``k`` or
      ``weights``, plus ``inputs``, the names of the fused stages in pipeline order;
    - else the single first stage, with its whole stored config: ``bm25`` (engine,
      k1, b, analyzer), ``dense`` (search and embedding identity: model, ONNX
      SHA-256, dimensions, normalization, prefixes, max tokens) or ``external``
      (the retriever's own config; assay cannot see its scale, so all of it counts).

    The chunker, depth, ``final_k`` and the calibration applied are left out: they
    change which chunks score, not what a score means. Two runs whose identities are
    equal produce scores on one scale, so a calibration fitted on one applies to the other.
    """
    retrieval = config.get("retrieval") or {}
    stages = [s for s in config.get("stages") or ["bm25", "final"] if s != "final"]
    if "rerank" in stages:
        stage = "rerank"
    elif "fusion" in stages:
        stage = "fusion"
    else:
        stage = stages[-1]
    stage_config = dict(retrieval.get(stage) or {})
    fields = _SCALE_FIELDS.get(stage)
    if fields:
        stage_config = {k: stage_config.get(k) for k in fields}
    if stage == "fusion":
        stage_config["inputs"] = stages[: stages.index("fusion")]
    return {"stage": stage, "config": stage_config}


def describe_identity(identity: dict) -> str:
    """One phrase for a score identity, for messages: which scores, from what."""
    stage, c = identity["stage"], identity["config"]
    if stage == "bm25":
        analyzer = c.get("analyzer") or {}
        steps = [k for k in ("lowercase", "stopwords", "stemming") if analyzer.get(k)]
        return (f"BM25 scores (k1 {c.get('k1')}, b {c.get('b')}, analyzer: "
                f"{', '.join(steps) or 'no filters'})")
    if stage == "dense":
        emb = c.get("embedding") or {}
        return f"cosine scores of {emb.get('model')} (onnx {str(emb.get('onnx_sha256'))[:12]})"
    if stage == "fusion":
        how = f"k {c.get('k')}" if c.get("method") == "rrf" else f"weights {canonical_json(c.get('weights'))}"
        return f"{c.get('method')} fusion scores ({how}) of {' + '.join(c.get('inputs', []))}"
    if stage == "rerank":
        return f"cross-encoder scores of {c.get('model')} (onnx {str(c.get('onnx_sha256'))[:12]})"
    return f"scores of the {c.get('kind', stage)} retriever {c.get('name', '')}".rstrip()


def _differences(a, b, path: str = "") -> list[str]:
    """Dotted paths of the fields where two identities differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in _differences(a.get(k), b.get(k), f"{path}.{k}" if path else k)]
    return [] if a == b else [path]


def check_applies(calibration: dict, run_config: dict) -> None:
    """Refuse (ConfigError) a calibration whose scores came from something other than this run's.

    ``calibration`` is what ``runner.load_calibration`` returns; ``run_config`` the run's
    resolved config, built before any question is asked.
    """
    fitted = calibration["score_identity"]
    here = score_identity(run_config)
    if canonical_json(fitted) == canonical_json(here):
        return
    fitted_text, here_text = describe_identity(fitted), describe_identity(here)
    if fitted_text == here_text:
        fitted_text += f" (differs in {', '.join(_differences(fitted, here))})"
    raise ConfigError(
        f"calibration {calibration['calibration_id']} was fitted on run {calibration['fitted_on_run']} "
        f"(pipeline {calibration['pipeline']}), whose {calibration['stage']} scores are {fitted_text}; "
        f"this run (pipeline {run_config['pipeline']}) produces {here_text}, another scale, so its "
        f"probabilities would mean nothing here. Fit one on a run of this pipeline: "
        f"`assay run --pipeline {run_config['pipeline']} ...`, then `assay calibrate RUN_ID`"
    )


def fit_and_store(warehouse, run_id: str) -> tuple[str, dict]:
    _, rows = warehouse.query("reports/top_scores", run_id=run_id)
    ids = [r[0] for r in rows]
    labels = [1 if r[1] else 0 for r in rows]
    scores = [r[2] for r in rows]
    result = calibrate(ids, scores, labels)
    (config_hash, pipeline, config, judgments_hash), = warehouse.con.execute(
        "SELECT config_hash, pipeline, config, judgments_hash FROM runs WHERE run_id = ?", [run_id]).fetchall()
    identity = score_identity(json.loads(config))
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    calibration_id = f"cal-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    data = result.to_dict()
    with warehouse.transaction():
        warehouse.con.execute(
            "INSERT INTO calibrations (calibration_id, run_id, created_at, method, a, b, threshold, fit_set_hash, "
            "config_hash, result, caveat, pipeline, stage, score_identity, judgments_hash) "
            "VALUES (?, ?, ?, 'platt', ?, ?, ?, ?, ?, ?, ?, ?, 'final', ?, ?)",
            [calibration_id, run_id, now, result.a, result.b, float(result.threshold), result.fit_set_hash,
             config_hash, json.dumps(data), result.caveat, pipeline, canonical_json(identity), judgments_hash])
    return calibration_id, {**data, "pipeline": pipeline, "stage": "final", "score_identity": identity,
                            "judgments_hash": judgments_hash}


def _rates(c: dict | None) -> list[str]:
    """TPR, TNR and balanced accuracy as cells: n/a for a rate with no question to count, - for no split."""
    if not c:
        return ["-"] * 3
    return ["n/a" if c[k] is None else f"{c[k]:.3f}" for k in ("tpr", "tnr", "balanced_accuracy")]


def render(calibration_id: str, run_id: str, data: dict) -> str:
    from assay.core.escape import terminal as esc
    from assay.core.tables import render as grid

    lines = [
        f"calibration {esc(calibration_id)} fitted on run {esc(run_id)}",
        f"  Platt scaling: P(answerable | top score s) = 1 / (1 + exp(-({data['a']:.6g} * s + {data['b']:.6g})))",
        f"  threshold {float(data['threshold']):.4f} (abstain below it), chosen to maximize balanced accuracy",
        f"  questions: {data['n']} ({data['n_answerable']} answerable, {data['n_no_answer']} no_answer, "
        f"{data['n_no_hits']} without hits, which always abstain)",
        f"  fit set {data['fit_set_hash']}",
        f"  scores: {esc(data['stage'])} stage of pipeline {esc(data['pipeline'])}, "
        f"{esc(describe_identity(data['score_identity']))}; "
        "a run whose scores come from anything else refuses it",
        "",
    ]
    rows = [["in-sample", *_rates(data["in_sample"]), ""]]
    rows += [[f"held-out (fit {split['fit']}, test {split['test']})",
              *(["-"] * 3 if split.get("error") else _rates(split["confusion"])), split.get("error") or ""]
             for split in data["held_out"]]
    heads = ["questions", "TPR", "TNR", "balanced accuracy", "note"]
    if not any(r[-1] for r in rows):
        heads, rows = heads[:-1], [r[:-1] for r in rows]
    lines += ["  " + line for line in grid(heads, rows).splitlines()]  # indented like the lines around it
    lines += ["", f"  {esc(data['caveat'])}", "",
              f"apply it with: assay run --calibration {esc(calibration_id)} ..."]
    return "\n".join(lines) + "\n"
