"""`assay calibrate`: fit a Platt calibration on a stored run, store it, and describe it.

The fit is on each question's top final score (label 1 answerable, 0 no_answer),
with in-sample and held-out figures (see assay.calibration). The stored artifact
carries the fit set's hash and the in-sample caveat; `assay run --calibration ID`
applies it: below the threshold the pipeline returns nothing.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone

from assay.calibration import calibrate


def fit_and_store(warehouse, run_id: str) -> tuple[str, dict]:
    _, rows = warehouse.query("reports/top_scores", run_id=run_id)
    ids = [r[0] for r in rows]
    labels = [1 if r[1] else 0 for r in rows]
    scores = [r[2] for r in rows]
    result = calibrate(ids, scores, labels)
    config_hash = warehouse.con.execute("SELECT config_hash FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    calibration_id = f"cal-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    data = result.to_dict()
    with warehouse.transaction():
        warehouse.con.execute(
            "INSERT INTO calibrations VALUES (?, ?, ?, 'platt', ?, ?, ?, ?, ?, ?, ?)",
            [calibration_id, run_id, now, result.a, result.b, float(result.threshold), result.fit_set_hash,
             config_hash, json.dumps(data), result.caveat])
    return calibration_id, data


def _rates(c: dict | None) -> str:
    if not c:
        return "-"
    f = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    return f"TPR {f(c['tpr'])}  TNR {f(c['tnr'])}  balanced accuracy {f(c['balanced_accuracy'])}"


def render(calibration_id: str, run_id: str, data: dict) -> str:
    lines = [
        f"calibration {calibration_id} fitted on run {run_id}",
        f"  Platt scaling: P(answerable | top score s) = 1 / (1 + exp(-({data['a']:.6g} * s + {data['b']:.6g})))",
        f"  threshold {float(data['threshold']):.4f} (abstain below it), chosen to maximize balanced accuracy",
        f"  questions: {data['n']} ({data['n_answerable']} answerable, {data['n_no_answer']} no_answer, "
        f"{data['n_no_hits']} without hits, which always abstain)",
        f"  fit set {data['fit_set_hash']}",
        "",
        f"  {'in-sample:':<32}{_rates(data['in_sample'])}",
    ]
    for split in data["held_out"]:
        label = f"held-out (fit {split['fit']}, test {split['test']}):"
        lines.append(f"  {label:<32}{_rates(split['confusion']) if not split.get('error') else split['error']}")
    lines += ["", f"  {data['caveat']}", "",
              f"apply it with: assay run --calibration {calibration_id} ..."]
    return "\n".join(lines) + "\n"
