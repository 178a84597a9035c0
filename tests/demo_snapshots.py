"""The demo report's golden snapshots: what tests/project/test_demo.py compares and tools/update_goldens.py writes.

One definition of each snapshot's text, so the test and the command that rewrites the files cannot drift
apart. The test only ever reads tests/fixtures/golden/; only the command (`make goldens`, never run by `make test`
or CI) writes there.
"""

from __future__ import annotations

import json
from pathlib import Path

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
DEMO = Path(__file__).resolve().parents[1] / "judgments" / "demo"


def demo_report(warehouse) -> dict:
    """The demo's run (`assay demo`'s options) over the demo golden set, written into ``warehouse``, and its report."""
    from assay.runs.demo import run_options
    from assay.present.report import build_report
    from assay.runs.runner import run

    record = run(warehouse, DEMO / "corpus", DEMO / "judgments.jsonl", run_options())
    return build_report(warehouse, record.run_id)


def metrics_text(report: dict) -> str:
    rows = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in report["metrics"]]
    return json.dumps(rows, indent=1) + "\n"


def table_text(report: dict) -> str:
    """The report's table without the run id line and the latency line two below it (they change from run to run);
    the verdict in words above them is kept."""
    from assay.present.report import render

    text = render(report, "table").splitlines()
    first = next((i for i, line in enumerate(text) if line.startswith("run ")), None)
    if first is None or not text[first + 2].startswith("latency per question"):
        raise ValueError(f"the report table no longer has the run id and, two lines below, the latency: {text[:5]}")
    return "\n".join(text[:first] + text[first + 1:first + 2] + text[first + 3:]) + "\n"


SNAPSHOTS = {"demo_metrics.json": metrics_text, "demo_report.txt": table_text}
