"""The corpus options and messages end to end: `assay ingest`, `run`, `show`, `judgments check`, `sweep` and the
HTML report on a corpus of real files made here (a PDF, a DOCX, Markdown with emphasis, a latin-1 file, an empty
file, a file without an extension, an .htm page, files assay does not read), and what the warehouse stores."""

import json
import re
import sys

import duckdb
import pytest
from click.testing import CliRunner
from documents import report_pdf, write_docx

from assay.cli import cli
from assay.inputs.corpus.pdf import identity as pdf_identity
from assay.present.drilldown import question_detail
from assay.store.warehouse import Warehouse

LATIN1 = "The caf\u00e9 menu lists cr\u00e8me br\u00fbl\u00e9e.\n"


def invoke(*args, code=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def corp(tmp_path):
    root = tmp_path / "corp"
    report_pdf(root / "report.pdf")
    write_docx(root / "guide.docx")
    (root / "notes.md").write_text("# Release notes\n\nThe server has **support for both HTTP/1.1 and HTTP/2** "
                                   "since 2.0.\n")
    (root / "page.htm").write_text("<html><head><title>FAQ</title></head><body><p>Backups run <b>nightly</b>."
                                   "</p></body></html>")
    (root / "legacy.txt").write_bytes(LATIN1.encode("latin-1"))
    (root / "empty.md").write_bytes(b"")
    (root / "LICENSE").write_text("Permission is hereby granted, free of charge.\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "minutes.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    return root


def gold(qid, query, doc, quote=None):
    entry = {"doc": doc} if quote is None else {"doc": doc, "quote": quote}
    return {"query_id": qid, "query": query, "category": "normal", "form": "match", "hard_class": "normal",
            "gold": [entry]}


# every quote as a reader copies it: the PDF's ligatures and its line-end hyphen, Markdown as rendered
QUESTIONS = [
    gold("cafe", "what does the cafe menu list", "legacy.txt", "crème brûlée"),
    gold("columns", "where does the right column start", "report.pdf",
         "The right column starts after the left one is done"),
    gold("empty", "what is in the empty notes", "empty.md"),
    gold("funds", "who reviewed the flow of funds", "report.pdf",
         "The \ufb01nancial team reviewed the \ufb02ow of funds"),
    gold("laptops", "when do new staff get laptops", "guide.docx", "New staff get laptops on their first day."),
    gold("meaning", "how does dense retrieval find passages", "report.pdf",
         "Dense retrieval finds passages by meaning"),
    gold("nightly", "when do backups run", "page.htm", "Backups run nightly."),
    gold("protocols", "which HTTP versions are supported", "notes.md", "has support for both HTTP/1.1 and HTTP/2"),
]


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_ingest_says_how_it_read_each_file_and_stores_it(corp, tmp_path):
    wh = tmp_path / "w.duckdb"
    out = invoke("ingest", corp, "--warehouse", wh)
    assert out.stderr.splitlines() == [
        f"warning: {corp}/empty.md is empty: kept (a retriever can return it), but no quote can resolve in it",
        f"note: {corp}/legacy.txt: not UTF-8; read as cp1252 (detected; --encoding NAME reads such files as NAME)",
        f"note: 4 files under {corp} not read: .doc 1, .png 1, hidden 1, no extension 1 (--verbose lists them)",
        f"read 1 PDF file (3 pages) with {pdf_identity()['library']}; 1 DOCX file with python-docx "
        f"{__import__('importlib.metadata').metadata.version('python-docx')}"]
    corpus_hash = re.fullmatch(r"ingested 6 documents, corpus ([0-9a-f]{64})\n", out.stdout).group(1)
    con = duckdb.connect(str(wh), read_only=True)
    try:
        docs = con.execute("SELECT doc_id, format, encoding, encoding_source, length(text) = 0 FROM documents "
                           "WHERE corpus_hash = ? ORDER BY doc_id", [corpus_hash]).fetchall()
        pages = con.execute("SELECT doc_id, page, start_char, end_char FROM document_pages WHERE corpus_hash = ? "
                            "ORDER BY page", [corpus_hash]).fetchall()
        skipped = con.execute("SELECT path, extension, reason FROM corpus_skipped WHERE corpus_hash = ? ORDER BY path",
                              [corpus_hash]).fetchall()
        readers = json.loads(con.execute("SELECT readers FROM corpora").fetchall()[0][0])
    finally:
        con.close()
    assert docs == [("empty.md", "markdown", "utf-8", "default", True), ("guide.docx", "docx", None, None, False),
                    ("legacy.txt", "text", "cp1252", "detected", False),
                    ("notes.md", "markdown", "utf-8", "default", False),
                    ("page.htm", "html", "utf-8", "default", False), ("report.pdf", "pdf", None, None, False)]
    assert [p[:2] for p in pages] == [("report.pdf", 1), ("report.pdf", 2), ("report.pdf", 3)]
    assert pages[0][2] == 0 and pages[0][3] == pages[1][2] and pages[1][3] == pages[2][2]
    assert skipped == [
        (".DS_Store", "", "hidden (the name starts with a dot)"),
        ("LICENSE", "", "no extension: --extensionless reads such files as plain text"),
        ("logo.png", ".png",
         "not a format assay reads (it reads .md, .markdown, .txt, .rst, .html, .htm, .pdf, .docx)"),
        ("minutes.doc", ".doc", "a Word 97-2003 file: assay reads .docx; save it as .docx")]
    assert readers == {"pdf": pdf_identity(), "docx": readers["docx"], "decoded": {"legacy.txt": "cp1252"}}

    # a file that is not read changes nothing but the list, which the latest reading replaces
    (corp / "chart.svg").write_text("<svg/>")
    again = invoke("ingest", corp, "--warehouse", wh, "--verbose")
    assert again.stdout == f"already in the warehouse: 6 documents, corpus {corpus_hash}\n"
    assert "  not read: chart.svg: not a format assay reads (it reads .md, .markdown, .txt, .rst, .html, .htm, " \
           ".pdf, .docx)" in again.stderr.splitlines()
    con = duckdb.connect(str(wh), read_only=True)
    try:
        assert con.execute("SELECT COUNT(*) FROM corpus_skipped").fetchall() == [(5,)]
    finally:
        con.close()


def test_options_and_assay_toml_choose_the_files_and_the_encoding(corp, tmp_path, monkeypatch):
    wh = tmp_path / "w.duckdb"
    out = invoke("ingest", corp, "--warehouse", wh, "--extensionless", "--encoding", "latin-1", "--include", "*.txt",
                 "--include", "LICENSE")
    assert f"note: {corp}/legacy.txt: not UTF-8; read as iso8859-1 (--encoding)" in out.stderr
    assert "ingested 2 documents" in out.stdout
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assay.toml").write_text('[corpus]\nexclude = ["*.pdf", "*.docx"]\nextensionless = true\n')
    out = invoke("ingest", corp, "--warehouse", wh, "--verbose")
    assert "ingested 5 documents" in out.stdout
    assert "  not read: report.pdf: excluded by the glob '*.pdf'" in out.stderr.splitlines()
    out = invoke("ingest", corp, "--warehouse", wh, "--no-extensionless", "--exclude", "*.md")  # flags replace it
    assert "ingested 4 documents" in out.stdout and "report.pdf" not in out.stderr
    bad = invoke("ingest", corp, "--warehouse", wh, "--encoding", "latn-1", code=2)
    assert "Invalid value for '--encoding': unknown encoding 'latn-1'; give a name Python knows" in bad.stderr
    bad = invoke("ingest", corp, "--warehouse", wh, "--exclude", "/", code=2)
    assert "Invalid value for '--exclude': '/' is not a glob; give one like '*.pdf' or 'docs/**'" in bad.stderr


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_resolves_quotes_copied_from_each_format_to_their_page_and_span(corp, judgments, tmp_path):
    wh = tmp_path / "w.duckdb"
    out = invoke("run", "--corpus", corp, "--judgments", judgments, "--warehouse", wh, "--chunk-size", "120")
    assert out.stderr.count("  not read: ") == 0 and out.stderr.count("note: 4 files under") == 1
    run_id = out.stdout.strip().splitlines()[-1]
    with Warehouse.open(wh, read_only=True) as w:
        spans = {qid: (doc, start, end) for qid, doc, start, end in w.con.execute(
            "SELECT query_id, doc_id, start_char, end_char FROM gold_spans").fetchall()}
        texts = dict(w.con.execute("SELECT doc_id, text FROM documents").fetchall())
        pages = {qid: (first, last) for qid, first, last in w.con.execute(
            "SELECT query_id, first_page, last_page FROM gold_pages").fetchall()}
        hit_pages = w.con.execute("SELECT DISTINCT first_page FROM hit_pages WHERE run_id = ? AND doc_id = "
                                  "'report.pdf' ORDER BY 1", [run_id]).fetchall()
        columns = question_detail(w, run_id, "columns", depth=3)
        laptops = question_detail(w, run_id, "laptops", depth=3)
    shown = {qid: texts[doc][start:end] for qid, (doc, start, end) in spans.items()}
    assert shown == {
        "cafe": "crème brûlée",
        "columns": "The right column starts after\nthe left one is done",
        "empty": "",  # the whole (empty) document
        "funds": "The financial team reviewed the flow of funds",
        "laptops": "New staff get laptops on their first day.",
        "meaning": "Dense retrie-\nval finds passages by meaning",
        "nightly": "Backups run nightly.",
        "protocols": "has **support for both HTTP/1.1 and HTTP/2",
    }
    assert pages == {"columns": (2, 2), "funds": (1, 1), "meaning": (1, 1)}  # only paged documents have pages
    assert {2} <= {p for p, in hit_pages} <= {1, 2, 3}
    assert (columns["gold"][0]["page"], columns["gold"][0]["pages"]) == (2, [2])
    pdf_hits = [h for s in columns["stages"] for h in s["hits"] if h["doc_id"] == "report.pdf"]
    assert pdf_hits and all(h["page"] == h["pages"][0] and h["pages"] for h in pdf_hits)
    assert (laptops["gold"][0]["page"], laptops["gold"][0]["pages"]) == (None, [])

    show = invoke("show", run_id, "columns", "--depth", "3", "--warehouse", wh).stdout
    assert re.search(r"^  0  report\.pdf \[\d+, \d+\)  p\. 2  grade 1  \"The right column starts after the left one "
                     r"is done\"$", show, re.M)
    assert re.search(r"report\.pdf#\d+-\d+  pp?\. \d", show)
    docx_show = invoke("show", run_id, "laptops", "--warehouse", wh).stdout
    assert re.search(r"^  0  guide\.docx \[\d+, \d+\)  grade 1", docx_show, re.M)

    from assay.present.html.drill import drill, gold_block

    page = drill(columns, "q-columns", "columns")
    assert '<span class="page">p. 2</span>' in gold_block(columns["gold"][0]) and 'class="page">p' in page


def test_a_quote_into_an_empty_file_or_a_file_not_read_says_why(corp, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(gold("empty-quote", "what do the empty notes say", "empty.md", "release date")) + "\n"
                   + json.dumps(gold("minutes", "what did the board decide", "minutes.doc",
                                     "The board decided")) + "\n")
    out = invoke("run", "--corpus", corp, "--judgments", bad, "--warehouse", tmp_path / "w.duckdb", code=3)
    assert out.stderr.splitlines()[-3:] == [
        "error: 2 gold entries did not resolve:",
        f"  {bad}:1 (query empty-quote): empty.md is empty (no text to quote; the corpus keeps it so it can be judged "
        "whole): drop the quote to judge the whole document, or give the file text: 'release date'",
        f"  {bad}:2 (query minutes): document 'minutes.doc' is not in the corpus {corp}: the file is there but was not "
        "read (a Word 97-2003 file: assay reads .docx; save it as .docx)"]


def test_an_empty_file_can_be_retrieved_and_judged_whole(corp, judgments, tmp_path):
    run_file = tmp_path / "mine.run"
    run_file.write_text("empty Q0 empty.md 1 1.0 mine\nlaptops Q0 guide.docx 1 1.0 mine\n")
    wh = tmp_path / "w.duckdb"
    run_id = invoke("run", "--corpus", corp, "--judgments", judgments, "--warehouse", wh, "--pipeline", "trec-run",
                    "--run-file", run_file).stdout.strip().splitlines()[-1]
    report = json.loads(invoke("report", run_id, "--format", "json", "--warehouse", wh,
                               "-m", "Success@1").stdout)
    with Warehouse.open(wh, read_only=True) as w:
        found = dict(w.con.execute("SELECT query_id, value FROM measure_values WHERE run_id = ? AND measure = "
                                   "'Success@1' AND level = 'doc'", [run_id]).fetchall())
    assert found["empty"] == 1.0 and found["laptops"] == 1.0 and report["run"]["run_id"] == run_id


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_judgments_check_and_sweep_read_with_the_options_and_say_it_once(corp, judgments, tmp_path):
    out = invoke("judgments", "check", judgments, "--corpus", corp, "--verbose", "--exclude", "*.png")
    lines = out.stderr.splitlines()
    assert f"note: 4 files under {corp} not read: .doc 1, excluded 1, hidden 1, no extension 1" in lines
    assert "  not read: logo.png: excluded by the glob '*.png'" in lines
    assert "valid, 8 questions; 8 gold entries resolve exactly once against 6 documents" in out.stdout
    out = invoke("sweep", "--corpus", corp, "--judgments", judgments, "--chunker", "document", "--chunker", "fixed",
                 "--size", "200", "--warehouse", tmp_path / "w.duckdb")
    assert out.stderr.count(f"note: {corp}/legacy.txt: not UTF-8") == 1  # two points, one corpus, said once
    assert out.stderr.count("-- point") == 2


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_include_does_not_open_what_it_leaves_out(corp, tmp_path):
    import os

    os.mkfifo(corp / "pipe.md")
    out = invoke("ingest", corp, "--warehouse", tmp_path / "w.duckdb", "--exclude", "pipe.md")
    assert "ingested 6 documents" in out.stdout
