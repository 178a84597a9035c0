"""Whole-document chunking: one trimmed chunk per document."""

import pytest

from assay.inputs.chunking.document import DocumentChunker


def test_one_chunk_spanning_the_trimmed_document():
    text = "\n\n  # Title\n\nBody text.\n  \n"
    (chunk,) = DocumentChunker().chunk("dir/a.md", text)
    assert (chunk.start, chunk.end) == (4, 23)
    assert chunk.text == text[4:23] == "# Title\n\nBody text."
    assert (chunk.doc_id, chunk.ordinal, chunk.chunk_id) == ("dir/a.md", 0, "dir/a.md#4-23")


def test_an_untrimmed_document_keeps_all_of_its_offsets():
    text = "x" * 5000
    (chunk,) = DocumentChunker().chunk("d", text)
    assert (chunk.start, chunk.end, chunk.text) == (0, 5000, text)


@pytest.mark.parametrize("text", ["", " ", "\n\t \n"])
def test_empty_or_blank_documents_give_no_chunk(text):
    assert DocumentChunker().chunk("d", text) == []


def test_size_and_overlap_are_ignored():
    chunker = DocumentChunker.from_options(size=10, overlap=5)
    assert chunker.config() == {"name": "document"}
    (chunk,) = chunker.chunk("d", "a" * 100)
    assert chunk.end - chunk.start == 100
