"""Imports of the real collections in ../shared/collections (skipped where it is missing), and of small ones
written here: malformed, with queries that have no judgments, with an empty judged document."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.errors import AssayError, FormatError
from assay.store.imports import import_beir, import_trec
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.runs.runner import RunOptions, run
from conftest import ROOT

COLLECTIONS = ROOT.parent / "shared" / "collections"
shared = pytest.mark.skipif(not COLLECTIONS.is_dir(), reason=f"{COLLECTIONS} (shared collections) is missing")


def count(wh, sql, *params):
    return wh.con.execute(sql, list(params)).fetchall()[0][0]


@shared
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


@shared
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


# Cranfield as shipped: two documents without text, one of them judged relevant; and, as in CISI and CACM,
# queries without a relevant document, which an import leaves out and now names.
EMPTY_DOCS = ("warning: 2 documents have neither title nor text (471, 995); kept, so their ids and whole-document "
              "judgments hold, but no words of theirs can be retrieved or quoted; 1 of them judged relevant (471)")


def _gappy_beir(tmp_path):
    d = tmp_path / "cran"
    (d / "qrels").mkdir(parents=True)
    docs = [{"_id": "470", "title": "Flow", "text": "laminar flow over a flat plate"}, {"_id": "471", "text": ""},
            {"_id": "995", "title": " ", "text": "\n"}, {"_id": "996", "title": "Heat", "text": "heat transfer"}]
    (d / "corpus.jsonl").write_text("".join(json.dumps(x) + "\n" for x in docs))
    queries = [("1", "laminar flow"), ("2", "no judgments at all"), ("3", "judged non-relevant only"),
               ("4", "heat transfer in an empty paper")]
    (d / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries))
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t470\t1\n3\t996\t0\n4\t471\t1\n4\t996\t2\n")
    return d


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_beir_import_reports_dropped_queries_and_keeps_an_empty_judged_document(tmp_path):
    wh = tmp_path / "w.duckdb"
    out = CliRunner().invoke(cli, ["import", "beir", str(_gappy_beir(tmp_path)), "--warehouse", str(wh)])
    assert out.exit_code == 0, out.output
    assert out.stderr.splitlines() == [
        EMPTY_DOCS,
        "note: 2 of 4 queries have no relevant document in test.tsv and were left out (2, 3); "
        "1 judged only non-relevant (3)"]
    assert out.stdout.startswith("imported corpus @cran (4 documents, corpus ")
    assert "judgments @cran/test (2 questions, 3 relevant documents; 1 judged non-relevant left out)" in out.stdout
    quiet = CliRunner().invoke(cli, ["--quiet", "import", "beir", str(_gappy_beir(tmp_path / "again")),
                                     "--name", "cran2", "--warehouse", str(tmp_path / "w2.duckdb")])
    assert quiet.exit_code == 0 and len(quiet.stderr.splitlines()) == 2  # warnings and notes survive --quiet
    run = CliRunner().invoke(cli, ["run", "--corpus", "@cran", "--judgments", "@cran/test", "--chunker", "document",
                                   "--warehouse", str(wh)])
    assert run.exit_code == 0, run.output
    assert "resolved 3 gold entries for 2 questions against 4 documents" in run.stderr
    report = CliRunner().invoke(cli, ["report", "--warehouse", str(wh)])
    assert report.exit_code == 0, report.output


def test_beir_import_summary_in_python(tmp_path, warehouse):
    summary = import_beir(warehouse, _gappy_beir(tmp_path), "test")
    assert summary["empty_documents"] == ["471", "995"] and summary["empty_judged"] == ["471"]
    assert summary["queries_left_out"] == ["2", "3"] and summary["left_out_non_relevant_only"] == ["3"]
    assert summary["queries_read"] == 4 and summary["queries"] == 2
    kept = dict(warehouse.con.execute("SELECT doc_id, text FROM documents WHERE doc_id IN ('471', '995')").fetchall())
    assert kept == {"471": "", "995": " \n\n\n"}  # title, blank line, text: kept as written


def test_trec_import_reports_dropped_topics_and_keeps_an_empty_judged_document(tmp_path):
    docs = tmp_path / "docs.trec"
    docs.write_text("<DOC>\n<DOCNO>470</DOCNO>\nlaminar flow over a flat plate\n</DOC>\n<DOC>\n<DOCNO>471</DOCNO>\n"
                    "</DOC>\n<DOC><DOCNO>995</DOCNO><TEXT>\n</TEXT></DOC>\n<DOC><DOCNO>996</DOCNO>heat</DOC>\n")
    topics = tmp_path / "topics.trec"
    topics.write_text("".join(f"<top>\n<num>{n}</num>\n<title>{t}</title>\n</top>\n"
                              for n, t in (("1", "laminar flow"), ("2", "unjudged"), ("3", "empty paper"))))
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 470 1\n3 0 471 1\n")
    wh = tmp_path / "w.duckdb"
    out = CliRunner().invoke(cli, ["import", "trec", "--docs", str(docs), "--topics", str(topics), "--qrels",
                                   str(qrels), "--name", "cran", "--warehouse", str(wh)])
    assert out.exit_code == 0, out.output
    assert out.stderr.splitlines() == [
        EMPTY_DOCS, "note: 1 of 3 queries have no relevant document in qrels and were left out (2)"]
    run = CliRunner().invoke(cli, ["run", "--corpus", "@cran", "--judgments", "@cran", "--chunker", "document",
                                   "--warehouse", str(wh)])
    assert run.exit_code == 0, run.output
