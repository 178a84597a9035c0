"""The bundled demo golden set: every quote resolves, and the demo report matches its golden snapshot.

These tests only read the snapshots (tests/fixtures/golden/). After an intended change, rewrite them with
`make goldens` (tools/update_goldens.py; never run by `make test` or CI), review the diff and commit it.
"""

import importlib.util
import os
from collections import Counter
from pathlib import Path

import demo_snapshots
import pytest
from demo_snapshots import GOLDEN

from assay.inputs.corpus import load_corpus
from assay.inputs.judgments import load_judgments, resolve_gold
from assay.inputs.judgments.resolve import find_quote
from conftest import DEMO, ROOT


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
    if os.environ.get("ASSAY_UPDATE_GOLDEN"):
        # it used to rewrite the snapshot and then compare it with itself: a test that could not fail
        pytest.fail("ASSAY_UPDATE_GOLDEN no longer rewrites snapshots; run `make goldens`, review the diff, commit")
    path = GOLDEN / name
    assert path.exists(), f"missing snapshot {path}; run `make goldens`"
    assert actual == path.read_text()


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    from assay.store.warehouse import Warehouse

    with Warehouse.open(tmp_path_factory.mktemp("demo") / "w.duckdb") as wh:
        yield demo_snapshots.demo_report(wh)


def test_demo_report_metrics_snapshot(demo_report):
    _snapshot("demo_metrics.json", demo_snapshots.metrics_text(demo_report))


def test_demo_report_table_snapshot(demo_report):
    _snapshot("demo_report.txt", demo_snapshots.table_text(demo_report))


def test_the_update_command_writes_exactly_what_the_tests_compare(demo_report, tmp_path):
    spec = importlib.util.spec_from_file_location("update_goldens", ROOT / "tools" / "update_goldens.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.write_snapshots(demo_report, tmp_path) == ["demo_metrics.json", "demo_report.txt"]
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {
        name: (GOLDEN / name).read_text() for name in demo_snapshots.SNAPSHOTS}
    assert tool.write_snapshots(demo_report, tmp_path) == []  # unchanged: nothing rewritten


def test_the_snapshot_tests_refuse_the_old_update_variable(demo_report, monkeypatch):
    monkeypatch.setenv("ASSAY_UPDATE_GOLDEN", "1")
    before = {name: (GOLDEN / name).read_text() for name in demo_snapshots.SNAPSHOTS}
    with pytest.raises(pytest.fail.Exception, match="run `make goldens`"):
        _snapshot("demo_report.txt", "anything")
    assert {name: (GOLDEN / name).read_text() for name in demo_snapshots.SNAPSHOTS} == before
