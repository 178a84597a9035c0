"""The chunking package: the chunk record, trimming, and chunkers looked up by name."""

import pytest

from assay.inputs.chunking import Chunk, chunk_document, chunker_label, chunker_names, make_chunker, trim
from assay.inputs.chunking.document import DocumentChunker
from assay.inputs.chunking.fixed import FixedChunker
from assay.inputs.chunking.recursive import RecursiveChunker
from assay.core.errors import ConfigError


def test_chunk_id_is_doc_and_span():
    assert Chunk("a/b.md", 3, 10, 42, "x" * 32).chunk_id == "a/b.md#10-42"


@pytest.mark.parametrize("text, start, end, expected", [
    ("  ab  ", 0, 6, (2, 4)),
    ("\n\tab", 0, 4, (2, 4)),
    ("ab", 0, 2, (0, 2)),
    ("   ", 0, 3, (3, 3)),
    ("a  b", 1, 3, (3, 3)),
    ("xx yy zz", 2, 6, (3, 5)),
])
def test_trim(text, start, end, expected):
    assert trim(text, start, end) == expected


def test_chunk_document_numbers_chunks_and_slices_text():
    text = "hello world"
    chunks = chunk_document("d", text, [(0, 5), (6, 11)])
    assert [(c.ordinal, c.start, c.end, c.text) for c in chunks] == [(0, 0, 5, "hello"), (1, 6, 11, "world")]


def test_every_chunker_is_registered_under_its_name():
    assert chunker_names() == ["document", "fixed", "recursive"]
    assert isinstance(make_chunker("document"), DocumentChunker)
    fixed = make_chunker("fixed", size=300, overlap=20)
    assert isinstance(fixed, FixedChunker) and fixed.config() == {"name": "fixed", "size": 300, "overlap": 20}
    recursive = make_chunker("recursive", size=120)
    assert isinstance(recursive, RecursiveChunker)
    assert recursive.config() == {"name": "recursive", "size": 120, "overlap": 0}


def test_an_unknown_chunker_lists_the_registered_names():
    with pytest.raises(ConfigError) as info:
        make_chunker("sentence")
    assert str(info.value) == "unknown chunker 'sentence'; choose one of: document, fixed, recursive"


def test_bad_options_reach_the_chunker():
    with pytest.raises(ConfigError):
        make_chunker("recursive", size=0)
    with pytest.raises(ConfigError):
        make_chunker("fixed", size=10, overlap=10)


def test_chunker_label():
    assert chunker_label({"name": "document"}) == "document"
    assert chunker_label({"overlap": 0, "name": "recursive", "size": 800}) == "recursive(size=800, overlap=0)"


def test_a_chunker_label_puts_size_and_overlap_first_and_the_rest_by_name():
    """A chunker's label: size, overlap, then the other parameters by name ("chars" sorts before "overlap", so
    overlap must keep its rank).

    Kills assay.inputs.chunking.x_chunker_label__mutmut_4, _5 (overlap not in the order: sorted among the rest)
    and _16 (order.index of a key not in it)."""
    label = chunker_label({"name": "recursive", "zeta": 2, "chars": 1, "overlap": 0, "size": 800})
    assert label == "recursive(size=800, overlap=0, chars=1, zeta=2)"
    chunker = {"name": "semantic", "model": "m", "overlap": 50, "breakpoint": 0.9, "size": 400}
    assert chunker_label(chunker) == "semantic(size=400, overlap=50, breakpoint=0.9, model=m)"
    assert chunker_label({"name": "x", "overlap": 0, "alpha": 1}) == "x(overlap=0, alpha=1)"
    assert chunker_label({"name": "document"}) == "document"
