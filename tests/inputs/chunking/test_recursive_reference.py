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
from hypothesis import example, given, settings, strategies as st
from reference_recursive import RecursiveChunker as Reference  # tests/inputs/chunking is on sys.path (no __init__)
from test_recursive import random_document

from assay.inputs.chunking import chunk_document, recursive
from assay.inputs.chunking.recursive import (RecursiveChunker, _Document, _sentence_cuts_around, _word_cuts_around,
                                             compiled_spans, python_spans)
from assay.inputs.corpus import load_corpus
from assay.inputs.formats.beir import read_corpus
from assay.store.imports import _doc_text

ROOT = Path(__file__).resolve().parents[3]
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


# python_spans against the reference on texts built to reach the windowed searches' branches: long
# lines without a line break, runs of marks longer than _GIVE_UP, whitespace runs at the size limit, words
# longer than the search window, marks just before a part


def reference_spans(text, size, overlap):
    return [(c.start, c.end) for c in Reference(size, overlap).chunk("d", text)]


WORDS = ["a", "bb", "word", "alpha", "sentence", "x" * 40, "y" * 300, "e.g.", "3.14", "Mr.", "U.S.A."]


MARKS = [".", "!", "?", "!.", "?.", "?!", ".!?", "." * 12, "!" * 10, "?" * 11, "!?" * 6, ".a" * 10, "1." * 12]


SPACES = [" ", " ", " ", "  ", "\t", " " * 40, " " * 300, "\xa0"]


def generated(seed: int, n: int) -> list[str]:
    """Long lines of words, marks and whitespace runs; now and then a line or paragraph break."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        out = []
        for _ in range(rng.randint(20, 160)):
            r = rng.random()
            if r < 0.5:
                out.append(rng.choice(WORDS[:5]) if rng.random() < 0.8 else rng.choice(WORDS))
            elif r < 0.7:
                out.append(rng.choice(MARKS))
            elif r < 0.97:
                out.append(rng.choice(SPACES))
            else:
                out.append(rng.choice(["\n", "\n\n", "\n \n"]))
        texts.append("".join(out))
    return texts


CASES = [(t, size) for i, t in enumerate(generated(16, 120)) for size in ((3, 7, 20, 33, 60, 100)[i % 6],)]


def test_python_spans_match_reference_on_long_lines():
    """python_spans == reference on long unbroken lines, overlap 0 and size - 1 and one between.

    Kills the windowed-search mutants: assay.inputs.chunking.recursive.x__sentence_cuts_around__mutmut_*,
    x__word_cuts_around__mutmut_*, x__punct_after__mutmut_*, x__punct_before__mutmut_*,
    x__sentence_chunk__mutmut_*, xǁ_Documentǁ_run_around__mutmut_*, xǁ_Documentǁsplit__mutmut_* (those
    not listed as equivalent)."""
    for text, size in CASES:
        for overlap in sorted({0, size // 2, size - 1}):
            assert python_spans(text, size, overlap) == reference_spans(text, size, overlap), (size, overlap, text)


def test_spans_falls_back_to_python(monkeypatch):
    """Without a build, RecursiveChunker.spans is python_spans(text, size, overlap): the reference's spans.

    Kills assay.inputs.chunking.recursive.xǁRecursiveChunkerǁspans__mutmut_9 to _14 (arguments dropped or None)."""
    monkeypatch.setattr(recursive, "_COMPILED", [None])
    text = "One two three. Four five six seven! Eight nine ten? Eleven twelve thirteen fourteen."
    assert RecursiveChunker(20, 7).spans(text) == reference_spans(text, 20, 7)
    assert RecursiveChunker(20, 7).spans(text) == [(0, 14), (15, 35), (36, 51), (52, 65), (59, 74), (75, 84)]


HEADING_BITS = ["#", "# ", "## ", "a", "Title", "x)", "a)b", ".", "..", "...", ")", "=", "===", "---", "~~~",
                "`", "::", ":", " ", "  ", "\t", "\n", "\n", "\n\n", "\n \n", "Body text.", "1. ", "- ", "T" * 79,
                "T" * 80, "U" * 81, "#.", ".a.", "a.a", ":a:"]


def heading_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(HEADING_BITS) for _ in range(rng.randint(1, 9))) for _ in range(n)]


def test_is_heading_piece_matches_the_reference_on_every_piece():
    """recursive._is_heading_piece (with its body-text shortcut and inlined one-line test) equals the
    reference's on every [start, end) of short texts of headings, adornments, marks and blanks.

    Kills assay.inputs.chunking.recursive.x__is_heading_piece__mutmut_* (the shortcut's conditions, the space
    and tab scans before and after, the overline look-ahead, the 80-character limit)."""
    from reference_recursive import _is_heading_piece as reference_is_heading_piece

    checked = 0
    for text in heading_texts(17, 250) + ["T" * 80 + "\n\nbody.", "U" * 81 + "\n\nbody.", "\n  ", " x\n\n", "x \n"]:
        for start in range(len(text)):
            for end in range(start + 1, len(text) + 1):
                got = recursive._is_heading_piece(text, start, end)
                assert got == reference_is_heading_piece(text, start, end), (text, start, end)
                checked += got
    assert checked == 286


def listed_cuts_around(text, a, b, x, level):
    """What the exact listing gives: the largest cut <= x (or a) and the smallest cut > x (or b)."""
    cuts = [c for m in recursive._SEPARATORS[level].finditer(text, a, b) if a < (c := m.end()) < b]
    return max([c for c in cuts if c <= x], default=a), min([c for c in cuts if c > x], default=b)


def test_cut_searches_equal_the_listing_or_give_up_exactly_as_often():
    """_sentence_cuts_around and _word_cuts_around, on 2,400 (part, position, window) draws each over
    generated lines: every answer equals the exact listing, and they give up (None) exactly 1909 and 1568
    times (a search that gives up later or sooner, or answers where it should give up, changes a count).

    Kills assay.inputs.chunking.recursive.x__sentence_cuts_around__mutmut_* and x__word_cuts_around__mutmut_*
    (windows, floors, tries, the whitespace-at-x branch, the rsplit of the last word, widening)."""
    rng = random.Random(5)
    nones = [0, 0]
    for text in generated(21, 40):
        text = text.replace("\n", " ")
        starts = [0] + [i for i in range(1, len(text)) if text[i - 1].isspace()]
        for _ in range(60):
            a = rng.choice(starts)
            b = rng.randint(a + 1, len(text))
            x = rng.randint(a, b - 1)
            window = rng.choice([4, 9, 16, 30, 64, 256])
            for level, search in ((2, _sentence_cuts_around), (3, _word_cuts_around)):
                got = search(text, a, b, x, window)
                if got is None:
                    nones[level - 2] += 1
                else:
                    assert got == listed_cuts_around(text, a, b, x, level), (level, text, a, b, x, window)
    assert nones == [1909, 1568]


def test_python_spans_carry_over_a_word_cut_at_the_size_that_ends_its_part():
    """Overlap across words longer than the size, one of them a multiple of it (its last character piece
    ends at the part's trimmed end, not the part's end): python_spans == the reference.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁ_run_around__mutmut_39 (nxt <= e: the part's trimmed end
    taken for a boundary)."""
    text = ' .!xx? xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.aaa bbaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa         ..  aaaaaaaaaaaaaaaaaaaaa.!!         aaaaaaaaaaaaaaa!  yyyyyyyy \n\n  y.. bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb  abbbbb  yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy  zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.!yyyyy  \n\n    xx '
    assert python_spans(text, 4, 2) == reference_spans(text, 4, 2)


RUN_AROUND_TEXTS = [  # (text, size, overlap) found by generating texts until a mutant's spans differed
    ('wordaalphaxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx!!!!!!!!!!!?!?!?!?!?!?bbword                                        word \tbba! word                                                                                                                                                                                                                                                                                                            sentencesentencebbword!?!?!?!?!?!?\n                                                                                 \xa0    alphasentenceaaword ! bbwordsentence3.14                                         \xa0sentence.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\t\xa0??.?????????????.bbawordalphawordalphaalphaaU.S.A. sentence!!!!!!!!!! word1.1.1.1.1.1.1.1.1.1.1.1.?!word \tMr.sentence!.sentencebbMr.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxbb1.1.1.1.1.1.1.1.1.1.1.1.abbabb!                                        sentencea a!. ???????????wordword.a.a.a.a.a.a.a.a.a.aa!.!?!?!?!?!?!?bbbb word\t!.1.1.1.1.1.1.1.1.1.1.1.1.e.g.  awordalpha                                         word                                                                                 wordsentencealphaalpha\n \n                                                                                                                                                                                                                                                                                                              \n?.                                        alphaalphaalpha  wordalphae.g.yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy  sentence\n\n!!!!!!!!!!yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy ', 24, 20),
    ('  bb1.1.1.1.1.1.1.1.1.1.1.1.Mr.!!!!!!!!!!a                                                                                                                                                                                                                                                                                                             .a.a.a.a.a.a.a.a.a.a !  bb.?.sentence bb!a????????????!alpha!. wordbb???????????alpha?asentence sentence                                                                                                                                                                                                                                                                                                            abbalpha                                                                                word alphaalphaword?.yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy                                                                                                                                                                                                                                                                                                            word..!?bb alphasentence\xa0.a.a.a.a.a.a.a.a.a.asentence\talphabbsentence   ..!?sentencebb???????????Mr. alphasentence\n \n                                                                                                                                                                                                                                                                                                            alpha', 9, 3),
]


def test_python_spans_on_runs_whose_sub_parts_begin_with_whitespace_or_nest_deeper():
    """python_spans == the reference on texts whose long parts split into sub-parts that start with
    whitespace (a whitespace run longer than the size) and nest a level further.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁ_run_around__mutmut_99 and _100 (a sub-part's start taken
    at face value, or always searched from), _116 (the next level is level - 1)."""
    for text, size, overlap in RUN_AROUND_TEXTS:
        assert python_spans(text, size, overlap) == reference_spans(text, size, overlap), (size, overlap)


# texts built (or found by generating texts and shrinking) to reach one branch of the Python path: a
# heading glued to a long line that starts with blanks, a sentence mark inside the pieces before a long
# paragraph, a heading that ends with a mark, a paragraph with blanks before its break; python_spans is held
# to the reference and to the spans it gives, pinned


def assert_spans(text, size, overlap, expected):
    """python_spans equals the reference's spans, and those are the pinned ones."""
    assert reference_spans(text, size, overlap) == expected
    assert python_spans(text, size, overlap) == expected, (size, overlap, text)


def test_heading_glued_to_an_indented_long_line():
    """A Markdown heading, then a long line indented with blanks (a long part whose text starts after its
    first position): the heading stays glued to the line's first characters.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁglue__mutmut_12 and xǁ_Documentǁglue__mutmut_13 (the part's
    first text position taken as its start, a blank: the end of the blanks became a boundary, so the
    heading was a chunk alone)."""
    text = "# Title\n   " + "x" * 15 + " more words here and there"
    assert_spans(text, 12, 0, [(0, 23), (23, 31), (32, 42), (43, 52)])
    assert_spans(text, 12, 5, [(0, 23), (23, 31), (27, 37), (32, 42), (38, 46), (43, 52)])


def test_sentence_mark_inside_a_piece_before_a_long_paragraph():
    """Overlap 0, a chunk that starts with short paragraphs and whose size limit falls in a long one: the
    last sentence mark within the size is inside the second paragraph, so the chunk is not cut there (a
    paragraph that fits is one piece) but after that paragraph.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁpack__mutmut_105 (cut > first or cut >= ce: a mark before
    the long part accepted as the chunk's end)."""
    text = "A.\n\nB. Cc dd,\n\nDddd eeee. Ffff gggg hhhh. Iiii jjjj kkkk."
    assert_spans(text, 20, 0, [(0, 13), (15, 25), (26, 41), (42, 57)])


def test_markdown_heading_ending_with_a_mark_before_a_long_paragraph():
    """Overlap 0: "# Hi." is a heading (glued to the long paragraph after it) though it ends with a mark;
    the first chunk ends before it, not after its mark.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁpack__mutmut_105 and xǁ_Documentǁpack__mutmut_106
    (cut >= first: the heading's mark, followed by nothing but blanks up to the long part, taken as a
    sentence end inside the part)."""
    text = "Aa bb.\n\n# Hi.\n\nCccccc dddddd eeee. Gg hh ii jj kk. Ll mm."
    assert_spans(text, 20, 0, [(0, 6), (8, 34), (35, 50), (51, 57)])


def test_paragraph_with_blanks_before_its_break_is_a_heading():
    """"Title " (a space before the paragraph break) is 5 characters: it fits, and is a heading glued to
    what follows.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁparagraphs__mutmut_41 (text[stop - 2]: the trailing blank
    counted, so the title became a long part, never a heading)."""
    assert_spans("Title \n\nBody text here.", 5, 0, [(0, 12), (13, 17), (18, 23)])


def test_chunk_limit_at_the_end_of_a_long_part_with_blanks_after_it():
    """A long paragraph followed by a short lone line (a heading glued to nothing: it joins what came
    before), the size limit past the long part's end.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁaround__mutmut_16 (x > b: a position at a long part's end
    searched inside it)."""
    text = "x bb bb bb.alphaalpha a.\n\n  T"
    assert_spans(text, 20, 0, [(0, 7), (8, 21), (22, 29)])


def test_paragraph_break_at_the_end_of_the_text():
    """Text whose trimmed end is followed by a paragraph break: the paragraph search stops at the trimmed end.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁparagraphs__mutmut_9 and xǁ_Documentǁparagraphs__mutmut_12
    (the search for line breaks runs to the text's end: the break after the text is taken as a paragraph
    break, and the empty paragraph after it is read past the end)."""
    text = "xxxxxxxxxxxxxxxxxxxxxxxx bb alpha? a alpha xxxxxxxxxxxxxxxxxxxxxxxxxxxx.  word a!\n\n"
    assert_spans(text, 80, 0, [(0, 72), (74, 81)])


def split_items(text, size):
    out = []
    _Document(text, size, 0).split(0, len(text), 0, out)
    return out


def test_paragraphs_gives_what_split_gives_for_a_text_broken_only_into_paragraphs():
    """paragraphs(s, e): for a text whose line breaks inside its trimmed extent [s, e) all belong to paragraph
    breaks, split's items (a paragraph too long for a chunk as a long part of level 2), found with str.find;
    None for any other text. A line break among the blanks before s is outside: still paragraphs.

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁparagraphs__mutmut_8 (the first search from 0: the lone line
    break before the text gives None), _13 and _64 (rfind: the last line break of a paragraph break, where no
    separator starts, gives None), _15 (the loop never runs: None) and _19 (m = None: None)."""
    text = "Aa bb cc dd ee.\n\nFf gg.\n\nHh ii jj kk ll mm nn.\n \n  Oo."
    expected = [(0, 17, 2), (17, 25), (25, 51, 2), (51, 54)]
    assert _Document(text, 10, 0).paragraphs(0, len(text)) == expected
    assert split_items(text, 10) == expected
    indented = " \n" + text
    expected = [(0, 19, 2), (19, 27), (27, 53, 2), (53, 56)]
    assert _Document(indented, 10, 0).paragraphs(2, len(indented)) == expected
    assert split_items(indented, 10) == expected
    assert _Document("Aa bb.\nCc dd.\n\nEe.", 10, 0).paragraphs(0, 18) is None  # a line break inside a paragraph


def test_glue_keeps_a_leading_blank_piece_with_the_heading_after_it():
    """glue over split's items of a text opening with a paragraph break, then a heading: the first glued piece
    starts at 0, as RecursiveChunker._glue_headings of the reference glues it (blanks wait with the heading).

    Kills assay.inputs.chunking.recursive.xǁ_Documentǁglue__mutmut_22 (pending = None: the leading blank piece
    dropped, the first piece starting after it)."""
    text = "\n\nTitle\n\nBody one,\nline two.\n\nBody two."
    ref = Reference(12, 0)
    glued = ref._glue_headings(text, ref._pieces(text, 0, len(text), 0))
    assert glued == [(0, 19), (19, 30), (30, 39)]
    doc = _Document(text, 12, 0)
    items = split_items(text, 12)
    assert items == [(0, 2), (2, 9), (9, 19), (19, 29), (29, 30), (30, 39)]
    doc.glue(items)
    assert doc.starts == [start for start, _ in glued] + [glued[-1][1]]
    assert doc.runs == {}
