"""Results that name only a document are the whole document's span: they pay in span measures, and
comparisons say when two runs rank different units."""

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.verdicts.comparison import compare
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, run
from assay.verdicts.units import describe
from assay.store.warehouse import Warehouse
from conftest import DEMO

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"


def _mean(wh, run_id, name, level="chunk"):
    values = [v for (q, lvl), v in per_query(wh, run_id, parse_measure(name)).items() if lvl == level]
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A BM25 chunk run, and a document-level TREC run that ranks the same documents in the same order."""
    tmp = tmp_path_factory.mktemp("units")
    path = tmp / "w.duckdb"
    with Warehouse.open(path) as wh:
        chunks = run(wh, CORPUS, JUDGMENTS, RunOptions(chunk_size=400))
        rows = wh.con.execute("SELECT query_id, doc_id, rank FROM doc_hits WHERE run_id = ? AND stage = 'final' "
                              "ORDER BY query_id, rank", [chunks.run_id]).fetchall()
        run_file = tmp / "docs.run"
        run_file.write_text("".join(f"{q} Q0 {d} {r} {100 - r} docs\n" for q, d, r in rows))
        docs = run(wh, CORPUS, JUDGMENTS, RunOptions(pipeline="trec-run", run_file=str(run_file), chunk_size=400))
    return path, chunks.run_id, docs.run_id


def test_document_results_are_whole_document_spans_and_pay_for_their_size(runs):
    path, chunks, docs = runs
    with Warehouse.open(path, read_only=True) as wh:
        assert describe(wh, docs)["kind"] == "documents" and describe(wh, chunks)["kind"] == "chunks"
        # at chunk level a whole document overlaps every gold span in it: the hit rate equals the doc level's
        assert _mean(wh, docs, "Success@1") == _mean(wh, docs, "Success@1", "doc") == _mean(wh, chunks, "Success@1",
                                                                                          "doc")
        # what the prompt would hold tells them apart
        assert _mean(wh, docs, "SpanPrecision@10") < _mean(wh, chunks, "SpanPrecision@10") / 3
        assert _mean(wh, docs, "SpanRecall@1000tok") < _mean(wh, chunks, "SpanRecall@1000tok")
        whole = wh.con.execute("SELECT COUNT(*) FROM hits h JOIN runs r USING (run_id) JOIN chunks c "
                               "ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id JOIN documents d "
                               "ON d.corpus_hash = r.corpus_hash AND d.doc_id = c.doc_id WHERE h.run_id = ? "
                               "AND h.stage = 'final' AND (c.start_char <> 0 OR c.end_char <> LENGTH(d.text))",
                               [docs]).fetchall()
        assert whole == [(0,)]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_compare_says_when_units_differ(runs):
    path, chunks, docs = runs
    with Warehouse.open(path, read_only=True) as wh:
        result = compare(wh, chunks, docs)
        same = compare(wh, chunks, chunks)
    warning = result["units"]["warning"]
    assert warning.startswith("retrieval units differ: A ranks recursive(size=400, overlap=0) chunks (mean ")
    assert ", B ranks whole documents (mean " in warning and "SpanRecall@1000tok" in warning
    assert same["units"]["warning"] is None
    out = CliRunner().invoke(cli, ["compare", chunks, docs, "--warehouse", str(path)])
    assert out.exit_code == 0 and "WARNING: retrieval units differ" in out.stdout


def test_budgeted_measures_work_in_gate_rules_and_regress(runs):
    path, chunks, docs = runs
    invoke = lambda *a: CliRunner().invoke(cli, [*a, "--warehouse", str(path)])  # noqa: E731
    with Warehouse.open(path, read_only=True) as wh:
        recall = _mean(wh, docs, "SpanRecall@1000tok")
    passed = invoke("gate", docs, "--rule", f"SpanRecall@1000tok>={recall - 0.01:.3f}")
    assert passed.exit_code == 0 and "PASS" in passed.stdout and "SpanRecall@1000tok" in passed.stdout
    failed = invoke("gate", docs, "--rule", f"SpanRecall@1000tok:chunk>={recall + 0.01:.3f}")
    assert failed.exit_code == 6 and f"{recall:.3f} is not >=" in failed.stdout
    wrong = invoke("gate", docs, "--rule", "SpanRecall@1000tok:doc>=0.5")
    assert wrong.exit_code == 2 and "has level(s) chunk, not doc" in wrong.stderr
    regress = invoke("regress", docs, "--baseline", chunks, "--max-drop", "Success@1000tok=0.05")
    assert regress.exit_code == 7 and "Success@1000tok" in regress.stdout  # whole documents fill the budget sooner
