"""PDF files read page by page (assay.inputs.corpus.pdf), on real PDFs written by reportlab."""

import time
from dataclasses import replace

import pytest
from documents import LEFT, PAGE_1, PAGE_3, RIGHT, report_pdf, write_pdf

from assay.inputs.corpus import load_corpus, text_digest
from assay.inputs.corpus.notes import notes
from assay.inputs.corpus.pdf import PAGE_GAP, extract, identity
from assay.core.errors import CorpusError
from assay.core.hashing import corpus_hash


@pytest.fixture
def report(tmp_path):
    return report_pdf(tmp_path / "c" / "report.pdf")


def test_text_per_page_with_the_pages_tiling_the_text(report):
    doc = load_corpus(report.parent).by_id()["report.pdf"]
    assert doc.format == "pdf" and doc.encoding is None
    assert len(doc.pages) == 3
    assert doc.pages[0][0] == 0 and doc.pages[-1][1] == len(doc.text)
    assert all(a[1] == b[0] for a, b in zip(doc.pages, doc.pages[1:]))  # no gap, no overlap
    first, second, third = (doc.text[s:e] for s, e in doc.pages)
    assert first == ("Quarterly retrieval report\n\nThe financial team reviewed the flow of funds in March.\n"
                     "Dense retrie-\nval finds passages by meaning, not by words." + PAGE_GAP)
    assert third == PAGE_3[0] + "\n"


def test_a_ligature_glyph_is_spelled_as_its_letters_and_line_end_hyphenation_is_kept(report):
    assert "\ufb01" in PAGE_1[2]  # the PDF holds the ligature glyph, mapped to U+FB01 as a typesetter maps it
    text = load_corpus(report.parent).documents[0].text
    assert "financial" in text and "flow" in text
    assert not any(0xFB00 <= ord(c) <= 0xFB06 for c in text)
    assert "Dense retrie-\nval finds" in text


def test_a_two_column_page_drawn_line_by_line_reads_column_by_column(report):
    doc = load_corpus(report.parent).documents[0]
    s, e = doc.pages[1]
    assert doc.text[s:e] == "\n".join(LEFT) + "\n\n" + "\n".join(RIGHT) + PAGE_GAP


def test_a_span_names_its_pages(report):
    doc = load_corpus(report.parent).documents[0]
    right = doc.text.index("The right column starts after")
    assert doc.pages_of(right, right + 20) == [2]
    assert doc.pages_of(0, len(doc.text)) == [1, 2, 3]
    gap = doc.pages[0][1] - 1  # the blank line after page 1 belongs to page 1
    assert doc.pages_of(gap, gap) == [1] and doc.pages_of(gap, gap + 2) == [1, 2]
    assert load_corpus(report.parent).documents[0].pages_of(5, 5) == [1]


def test_the_text_made_is_in_the_hash_and_the_library_recorded_and_said(report):
    corpus = load_corpus(report.parent)
    doc = corpus.documents[0]
    assert corpus.readers == {"pdf": identity()}
    assert identity()["library"].startswith("pdfminer.six ")
    raw = [("report.pdf", report.read_bytes())]
    assert corpus.corpus_hash == corpus_hash(raw, {"report.pdf": text_digest(doc)})
    assert corpus.corpus_hash != corpus_hash(raw)  # a library that reads other text, or other pages, is another corpus
    assert corpus.corpus_hash != corpus_hash(raw, {"report.pdf": text_digest(replace(doc, text=doc.text + " "))})
    assert corpus.corpus_hash != corpus_hash(raw, {"report.pdf": text_digest(replace(doc, pages=doc.pages[:2]))})
    assert notes(corpus) == [f"read 1 PDF file (3 pages) with {identity()['library']}"]


def test_a_pdf_without_text_is_kept_empty_with_a_warning(tmp_path):
    scan = write_pdf(tmp_path / "c" / "scan.pdf", [[], []])  # two pages, no text layer
    corpus = load_corpus(scan.parent)
    doc = corpus.documents[0]
    assert doc.empty and doc.text == "" and doc.pages == ((0, 0), (0, 0))
    assert notes(corpus)[0] == (f"warning: {scan} has no text layer (a scanned PDF? assay does not read images): "
                                "kept (a retriever can return it), but no quote can resolve in it")


def test_a_damaged_pdf_fails_the_load_naming_it(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a pdf body\n")
    with pytest.raises(CorpusError) as info:
        load_corpus(root)
    assert f"{root / 'broken.pdf'}: cannot be read as a PDF (pdfminer.six: " in str(info.value)


def test_an_encrypted_pdf_fails_the_load_naming_it(tmp_path):
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    root = tmp_path / "c"
    root.mkdir()
    c = canvas.Canvas(str(root / "secret.pdf"), encrypt=pdfencrypt.StandardEncryption("user-pw", canPrint=0))
    c.drawString(72, 720, "classified")
    c.save()
    with pytest.raises(CorpusError) as info:
        load_corpus(root)
    assert str(info.value).endswith(f"{root / 'secret.pdf'}: is encrypted with a password; decrypt it (e.g. "
                                    "qpdf --decrypt) or remove it")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_extraction_speed(tmp_path, capsys):
    """Not a limit: the figure the README gives (dense two-column pages)."""
    lines = [" ".join(["retrieval", "evaluation", "passage", "quote", "span", "chunk"])] * 55
    pdf = write_pdf(tmp_path / "big.pdf", [(lines, lines)] * 20)
    start = time.perf_counter()
    text = extract(pdf.read_bytes())
    per_page = (time.perf_counter() - start) / 20
    assert len(text.pages) == 20 and text.text.count("retrieval") == 20 * 110
    with capsys.disabled():
        print(f"\nPDF extraction: {per_page * 1000:.0f} ms per two-column page of 110 lines")
