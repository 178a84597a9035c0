"""Imports of the real collections in ../shared/collections, and of small malformed ones."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.errors import AssayError, FormatError
from assay.imports import import_beir, import_trec
from assay.metrics.compute import per_query
from assay.metrics.registry import parse_measure
from assay.runner import RunOptions, run
from conftest import ROOT

COLLECTIONS = ROOT.parent / "shared" / "collections"
pytestmark = pytest.mark.skipif(not COLLECTIONS.is_dir(), reason=f"{COLLECTIONS} (shared collections) is missing")


def count(wh, sql, *params):
    return wh.con.execute(sql, list(params)).fetchall()[0][0]


def test_scifact_import_and_bm25_baseline(warehouse):
    summary = import_beir(warehouse, COLLECTIONS / "scifact", "test")
    assert (summary["documents"], summary["queries"], summary["gold_entries"]) == (5183, 300, 339)
    assert summary["corpus"] == "@scifact" and summary["judgments"] == "@scifact/test"
    title = warehouse.con.execute("SELECT title, text FROM documents WHERE doc_id = '4983'").fetchall()[0]
    assert title[0].startswith("Microstructural development of human newborn")
    assert title[1].startswith(title[0] + "\n\n")
    rec = run(warehouse, "@scifact", "@scifact/test", RunOptions(chunker="document", depth=100, doc_depth=100))
    values = [v for (q, lvl), v in per_query(warehouse, rec.run_id, parse_measure("nDCG@10")).items() if lvl == "doc"]
    # pinned: tantivy BM25 on SciFact test (published Anserini flat 0.6789, bm25s 0.6874)
    assert len(values) == 300 and sum(values) / 300 == pytest.approx(0.6838, abs=5e-5)
    with pytest.raises(AssayError, match="already holds a corpus named @scifact"):
        import_beir(warehouse, COLLECTIONS / "scifact", "test")


def test_vaswani_import(warehouse):
    v = COLLECTIONS / "vaswani"
    summary = import_trec(warehouse, v / "doc-text.trec", v / "query-text.trec", v / "qrels", "vaswani")
    assert (summary["documents"], summary["queries"], summary["gold_entries"]) == (11429, 93, 2083)
    assert count(warehouse, "SELECT COUNT(*) FROM queries WHERE judgments_hash = ?", summary["judgments_hash"]) == 93
    first = warehouse.con.execute("SELECT query_text FROM queries WHERE query_id = '1'").fetchall()[0][0]
    assert first.startswith("MEASUREMENT OF DIELECTRIC CONSTANT")


def _beir(tmp_path, corpus_lines):
    d = tmp_path / "mini"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("\n".join(corpus_lines) + "\n")
    (d / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what is a"}) + "\n" +
                                     json.dumps({"_id": "q2", "text": "unjudged"}) + "\n")
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n")
    return d


def test_small_beir_import_via_cli(tmp_path):
    d = _beir(tmp_path, [json.dumps({"_id": "d1", "title": "A", "text": "alpha"}),
                         json.dumps({"_id": "d2", "title": "", "text": "beta"})])
    wh = tmp_path / "w.duckdb"
    out = CliRunner().invoke(cli, ["import", "beir", str(d), "--warehouse", str(wh)])
    assert out.exit_code == 0, out.output
    assert "@mini/test (1 questions, 1 relevant documents; 1 judged non-relevant left out)" in out.stdout
    again = CliRunner().invoke(cli, ["import", "beir", str(d), "--name", "other", "--warehouse", str(wh)])
    assert again.exit_code == 1 and "already in the warehouse" in again.stderr
    gone = CliRunner().invoke(cli, ["run", "--corpus", "@nope", "--judgments", "@mini/test", "--warehouse", str(wh)])
    assert gone.exit_code == 1 and "no stored corpus named @nope" in gone.stderr and "@mini" in gone.stderr


def test_malformed_beir_line_names_it_and_writes_nothing(tmp_path, warehouse):
    d = _beir(tmp_path, [json.dumps({"_id": "d1", "title": "A", "text": "alpha"}), "{not json"])
    with pytest.raises(FormatError, match=r"corpus.jsonl:2"):
        import_beir(warehouse, d, "test")
    assert count(warehouse, "SELECT COUNT(*) FROM documents") == 0
    assert count(warehouse, "SELECT COUNT(*) FROM corpora") == 0


def test_missing_split(tmp_path, warehouse):
    d = _beir(tmp_path, [json.dumps({"_id": "d1", "title": "A", "text": "alpha"})])
    with pytest.raises(AssayError, match="no such split; available: test"):
        import_beir(warehouse, d, "dev")
