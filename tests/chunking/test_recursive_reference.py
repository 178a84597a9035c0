"""The recursive chunker gives exactly the spans of its reference: demo corpus, SciFact, generated text.

reference_recursive.py is the chunker as it was before it was made fast, kept verbatim: it lists
every piece (paragraph, line, sentence, word) and packs them one at a time, which states the rule
plainly. The chunker computes its spans in C (_recursive.c, the same steps) when that is built, else in
Python, finding piece boundaries only near each chunk's size limit; these tests hold both to the same
(start, end, ordinal, text) for every document, size and overlap tried.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reference_recursive import RecursiveChunker as Reference  # tests/chunking is on sys.path (no __init__)
from test_recursive import random_document

from assay.inputs.chunking import chunk_document
from assay.inputs.chunking.recursive import compiled_spans, python_spans
from assay.inputs.corpus import load_corpus
from assay.inputs.formats.beir import read_corpus
from assay.store.imports import _doc_text

ROOT = Path(__file__).resolve().parents[2]
SCIFACT = ROOT.parent / "shared" / "collections" / "scifact" / "corpus.jsonl"


COMPILED = compiled_spans()
SO = sorted(Path(python_spans.__code__.co_filename).parent.glob("_recursive.*.so"))
IMPLEMENTATIONS = [
    pytest.param(python_spans, id="python"),
    pytest.param(COMPILED, id="c", marks=pytest.mark.skipif(
        COMPILED is None, reason="the C code is not built (hatch_build.py: no C compiler or no Python headers "
        "when installing); the Python path is what runs")),
]


def rows(chunks):
    return [(c.ordinal, c.start, c.end, c.text) for c in chunks]


def assert_same(spans, text, size, overlap):
    expected = rows(Reference(size, overlap).chunk("d", text))
    assert rows(chunk_document("d", text, spans(text, size, overlap))) == expected, (size, overlap, text[:200])
    return expected


def test_a_built_c_module_is_current():
    if SO and COMPILED is None:
        pytest.fail(f"{SO[0].name} was built from another version of _recursive.c, so it is not used: "
                    "install again (make install, or pip install --no-deps -e .)")


def carry_limits(text, size):
    """Overlaps and sizes at which one more piece is carried or packed: the trimmed length from each
    piece's start (pieces as the reference glues them) to each later piece's end, and one either side."""
    ref = Reference(size, 0)
    whole = text.strip()
    if not whole or len(whole) <= size:
        return []
    pieces = ref._glue_headings(text, ref._pieces(text, 0, len(text), 0))
    out = set()
    for i, (start, _) in enumerate(pieces):
        for _, end in pieces[i:]:
            n = len(text[start:end].strip())
            if n > size + 1:
                break
            out.update((n - 1, n, n + 1))
    return sorted(o for o in out if o >= 0)


# -- generated text ---------------------------------------------------------------------------

FRAGMENTS = [
    "alpha", "beta", "gamma", "x", "Title", "Getting started", " ", "  ", "\t", " \t ", "\n", "\n\n", "\n \n",
    "\n\t\n  ", " \n", "\r\n", "\r", ".", "!", "?", ". ", "! ", "? ", ".\n", "e.g.", "3.14", "...", ",", ":",
    ")", "#", "# ", "## ", "=====", "-----", "~~~", "```", "....", "- ", "* ", "> ", "| a |", "1. ", "2) ",
    "\xa0", "\u2003", "\u3000", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85", "é", "日本語の文", "🙂",
    "y" * 37, "z" * 130,
]
TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=150).map("".join)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("spans", IMPLEMENTATIONS)
@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(TEXT, st.integers(1, 120), st.data())
@example("word " * 200, 20, None)  # words only
@example("x" * 1000, 64, None)  # no separator at all
@example(("x" * 300 + " ") * 4, 50, None)  # words longer than the size
@example("A. " + " " * 500 + "B. " + "w " * 400, 40, None)  # a whitespace run longer than the search window
@example("1.2.3.4.5.6.7.8.9.0." * 60 + " end. " + "tail " * 50, 30, None)  # marks not followed by spaces
@example("# T\n\n" + "long line of words " * 40 + "\n===\n" + "more " * 30, 60, None)  # a line break inside
@example("# One\n## Two\n\nBody sentence one is here. Body sentence two.\n\nTail paragraph.", 30, None)
@example("Intro.\n\n" + "T" * 85 + "\x85=====\n\nBody text that follows it. " * 3, 100, None)  # lines split by NEL
def test_generated_text(spans, text, size, data):
    assert_same(spans, text, size, 0)
    overlaps = {size - 1}
    if data is not None:
        limits = carry_limits(text, size)
        overlaps.add(data.draw(st.integers(0, size - 1)))
        if limits:
            overlaps.update(o for o in data.draw(st.lists(st.sampled_from(limits), max_size=3)) if o < size)
            other = data.draw(st.sampled_from(limits))  # a size exactly at a piece's end
            if other >= 1:
                assert_same(spans, text, other, data.draw(st.integers(0, other - 1)))
    for overlap in sorted(overlaps):
        assert_same(spans, text, size, overlap)


@pytest.mark.parametrize("spans", IMPLEMENTATIONS)
@pytest.mark.parametrize("seed", range(3))
def test_random_documents(spans, seed):
    """Headings of every kind (Markdown, rST over- and underlines, lone lines), messy and clean bodies."""
    rng = random.Random(1000 + seed)
    for _ in range(80):
        text, _ = random_document(rng, messy=rng.random() < 0.5)
        size = rng.randint(10, 300)
        assert_same(spans, text, size, 0)
        limits = [o for o in carry_limits(text, size) if o < size]
        for overlap in rng.sample(limits, min(3, len(limits))) + [rng.randint(0, size - 1)]:
            assert_same(spans, text, size, overlap)


# -- real text --------------------------------------------------------------------------------

@pytest.mark.parametrize("spans", IMPLEMENTATIONS)
@pytest.mark.parametrize("size, overlap", [(30, 0), (30, 29), (100, 0), (100, 40), (200, 50), (400, 0),
                                           (800, 0), (800, 200), (1600, 0)])
def test_demo_corpus(spans, size, overlap):
    corpus = load_corpus(ROOT / "judgments" / "demo" / "corpus")
    for doc in corpus.documents:
        assert_same(spans, doc.text, size, overlap)


@pytest.mark.skipif(not SCIFACT.exists(), reason=f"SciFact is not at {SCIFACT} (the shared collections checked "
                    "out next to the repository); the demo corpus and generated text still compare")
@pytest.mark.parametrize("spans", IMPLEMENTATIONS)
@pytest.mark.parametrize("size, overlap", [(800, 0), (300, 100)])
def test_scifact(spans, size, overlap):
    for doc in read_corpus(SCIFACT):
        assert_same(spans, _doc_text(doc.title, doc.text), size, overlap)
