"""Constants and boundaries of fusion and chunking that figures depend on, pinned with exact values.

- RRF's default k (60): the fused scores of ``rrf(lists)`` without k, as exact floats.
- The recursive chunker's overlap carry at its exact boundaries, in both of its paths (C when built, and
  Python; recursive.compiled_spans): a trailing piece exactly ``overlap`` long is carried, one character
  more is not; a carry that makes the next chunk exactly ``size`` long is kept; a chunk of exactly ``size``
  characters is packed whole.

Each test names the mutation it kills (each made by hand and seen to fail).
"""

import pytest

from assay.inputs.chunking.recursive import compiled_spans, python_spans
from assay.retrieval.fusion.rrf import rrf
from assay.retrieval import Hit


def test_rrf_default_k_is_60():
    """Kills: the default k of rrf changed (60 -> 61, or any other): the fused scores are 1/(60 + rank)
    summed in list-name order, compared as exact floats."""
    lists = {"bm25": [Hit("a#1", "a", 9.0), Hit("b#1", "b", 8.0)], "dense": [Hit("b#1", "b", 0.9)]}
    fused = rrf(lists)
    assert [(h.chunk_id, h.score) for h in fused] == [("b#1", 1.0 / 62 + 1.0 / 61), ("a#1", 1.0 / 61)]
    assert fused == rrf(lists, k=60)


SENTENCES = [f"Sentence {w} ends." for w in ("one", "two", "six", "ten", "red", "sky")]  # 18 characters each
TEXT = " ".join(SENTENCES)  # three sentences and their two spaces: 56 characters


def joined(i, j):
    return " ".join(SENTENCES[i:j])


SPANS = [pytest.param(python_spans, id="python"),
         pytest.param(compiled_spans(), id="c", marks=pytest.mark.skipif(
             compiled_spans() is None, reason="the C code is not built (hatch_build.py: no C compiler or no Python "
             "headers when installing); the Python path is what runs, and is tested"))]


@pytest.mark.parametrize("spans", SPANS)
@pytest.mark.parametrize("overlap, chunks", [
    # a carried sentence exactly as long as the overlap (18) is carried; at 17 it is not
    (18, [joined(0, 3), joined(2, 5), joined(4, 6)]),
    (17, [joined(0, 3), joined(3, 6)]),
    # two sentences and their space (37) carried exactly at 37, and the next chunk is then exactly 56 = size
    (37, [joined(0, 3), joined(1, 4), joined(2, 5), joined(3, 6)]),
    (36, [joined(0, 3), joined(2, 5), joined(4, 6)]),
    # no overlap: each chunk is exactly `size` characters
    (0, [joined(0, 3), joined(3, 6)]),
])
def test_the_overlap_carry_at_its_boundary(spans, overlap, chunks):
    """Kills, in _recursive.c's pack and in python_spans (_Document.pack): the carry's `> overlap` turned into
    `>=` (overlap 18 and 37 carry nothing more), the carry's `> size` into `>=` (overlap 37 would not carry two
    sentences into a 56-character chunk), and packing's `> size` into `>=` (a 56-character chunk would not be
    packed whole)."""
    assert [len(c) for c in chunks[:1]] == [56]
    assert [TEXT[s:e] for s, e in spans(TEXT, 56, overlap)] == chunks
