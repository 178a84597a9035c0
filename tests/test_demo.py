"""The bundled demo golden set: every quote resolves, and the demo report matches its golden snapshot.

Regenerate the snapshots after an intended change with: ASSAY_UPDATE_GOLDEN=1 make test
"""

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from assay.corpus import load_corpus
from assay.judgments import load_judgments, resolve_gold
from assay.judgments.resolve import find_quote
from assay.report import build_report, render
from assay.runner import RunOptions, run
from conftest import DEMO

GOLDEN = Path(__file__).parent / "golden"


def test_every_demo_quote_resolves_exactly_once():
    judgments = load_judgments(DEMO / "judgments.jsonl")
    corpus = load_corpus(DEMO / "corpus")
    docs = corpus.by_id()
    spans = resolve_gold(judgments, corpus)
    assert len(spans) == sum(len(j.gold) for j in judgments.judgments)
    for j in judgments.judgments:
        for entry in j.gold:
            if entry.quote is not None:
                assert len(find_quote(docs[entry.doc].text, entry.quote)) == 1, (j.query_id, entry.quote)


def test_demo_set_covers_the_contract():
    judgments = load_judgments(DEMO / "judgments.jsonl").judgments
    corpus = load_corpus(DEMO / "corpus")
    assert len(corpus.documents) >= 15 and len(judgments) >= 60
    assert set(Counter(j.category for j in judgments)) == {"normal", "ambiguous", "adversarial", "no_answer"}
    assert set(Counter(j.form for j in judgments)) == {"match", "gap"}
    assert {"near-duplicate", "specific-vs-general", "prose-free", "boilerplate", "normal"} <= {
        j.hard_class for j in judgments}
    assert {"near_miss", "out_of_corpus"} <= {j.unanswerable for j in judgments}
    assert {Path(d.doc_id).suffix for d in corpus.documents} == {".md", ".txt", ".rst", ".html"}


def _snapshot(name, actual):
    path = GOLDEN / name
    if os.environ.get("ASSAY_UPDATE_GOLDEN"):
        path.write_text(actual)
    assert path.exists(), f"missing snapshot {path}; run with ASSAY_UPDATE_GOLDEN=1"
    assert actual == path.read_text()


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    from assay.warehouse import Warehouse

    with Warehouse.open(tmp_path_factory.mktemp("demo") / "w.duckdb") as wh:
        record = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())
        yield build_report(wh, record.run_id)


def test_demo_report_metrics_snapshot(demo_report):
    rows = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in demo_report["metrics"]]
    _snapshot("demo_metrics.json", json.dumps(rows, indent=1) + "\n")


def test_demo_report_table_snapshot(demo_report):
    text = render(demo_report, "table").splitlines()
    # the first three lines carry the run id, corpus and latency, which change from run to run
    assert text[0].startswith("run ") and text[2].startswith("latency per question")
    _snapshot("demo_report.txt", "\n".join(text[1:2] + text[3:]) + "\n")
