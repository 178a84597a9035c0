"""Word files (assay.inputs.corpus.docx), on real DOCX files written by python-docx."""

import pytest
from documents import write_docx

from assay.inputs.corpus import load_corpus
from assay.inputs.corpus.docx import identity
from assay.inputs.corpus.notes import notes
from assay.core.errors import CorpusError


def test_paragraphs_and_tables_in_document_order(tmp_path):
    path = write_docx(tmp_path / "c" / "guide.docx")
    corpus = load_corpus(path.parent)
    doc = corpus.by_id()["guide.docx"]
    assert doc.text == ("Onboarding guide\n\n"
                        "New staff get laptops on their first day.\n\n"  # runs joined, styling gone
                        "Badges are printed at reception.\nLost badges cost ten euros.\n\n"  # a line break kept
                        "Item\tOwner\nVPN token\tIT desk\n\n"  # a row a line, cells by tabs
                        "Questions go to the HR channel.\n")
    assert doc.format == "docx" and doc.pages == () and doc.encoding is None
    assert corpus.readers == {"docx": identity()}
    assert notes(corpus) == [f"read 1 DOCX file with {identity()['library']}"]


def test_a_cell_merged_across_columns_is_read_once(tmp_path):
    import docx

    d = docx.Document()
    table = d.add_table(rows=2, cols=3)
    merged = table.cell(0, 0).merge(table.cell(0, 2))
    merged.text = "Quarterly totals"
    for cell, text in zip(table.rows[1].cells, ["Q1", "Q2", "Q3"]):
        cell.text = text
    root = tmp_path / "c"
    root.mkdir()
    d.save(str(root / "t.docx"))
    assert load_corpus(root).documents[0].text == "Quarterly totals\nQ1\tQ2\tQ3\n"


def test_an_empty_docx_is_kept_and_a_damaged_one_fails_naming_it(tmp_path):
    import docx

    root = tmp_path / "c"
    root.mkdir()
    docx.Document().save(str(root / "blank.docx"))
    corpus = load_corpus(root)
    assert corpus.documents[0].empty
    assert notes(corpus)[0].startswith(f"warning: {root / 'blank.docx'} has no text in its body: kept")
    (root / "fake.docx").write_bytes(b"this is not a zip")
    with pytest.raises(CorpusError) as info:
        load_corpus(root)
    assert f"{root / 'fake.docx'}: cannot be read as a DOCX (python-docx: " in str(info.value)
