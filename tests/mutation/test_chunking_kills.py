"""Kills for surviving mutants of assay.inputs.chunking.recursive and assay.inputs.chunking (issue 16).

The Python chunker (python_spans) is held to the verbatim reference (tests/chunking/reference_recursive.py)
on texts built to reach the windowed searches' branches (long lines without a line break, runs of marks
longer than _GIVE_UP, whitespace runs at the size limit, words longer than the search window, marks just
before a part); the search helpers are pinned to exact return values, None (gave up) included.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chunking"))  # reference_recursive (no __init__)
from reference_recursive import RecursiveChunker as Reference  # noqa: E402

import assay.inputs.chunking as chunking  # noqa: E402
from assay.inputs.chunking import chunker_label  # noqa: E402
from assay.inputs.chunking import recursive  # noqa: E402
from assay.inputs.chunking.recursive import (  # noqa: E402
    RecursiveChunker,
    _punct_after,
    _punct_before,
    _sentence_chunk,
    _sentence_cuts_around,
    _word_cuts_around,
    python_spans,
)


def reference_spans(text, size, overlap):
    return [(c.start, c.end) for c in Reference(size, overlap).chunk("d", text)]


# -- generated text ---------------------------------------------------------------------------------

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


# -- chunker_label ----------------------------------------------------------------------------------

def test_chunker_label_orders_size_overlap_then_other_keys_by_name():
    """size, overlap, then the rest by name ("chars" sorts before "overlap", so overlap must keep its rank).

    Kills assay.inputs.chunking.x_chunker_label__mutmut_4, x_chunker_label__mutmut_5 (overlap not in the order:
    sorted among the rest, after chars) and x_chunker_label__mutmut_16 (order.index of a key not in it)."""
    label = chunker_label({"name": "recursive", "zeta": 2, "chars": 1, "overlap": 0, "size": 800})
    assert label == "recursive(size=800, overlap=0, chars=1, zeta=2)"


# -- compiled_spans and RecursiveChunker.spans -------------------------------------------------------

def _built():
    try:
        from assay.inputs.chunking import _recursive
    except ImportError:
        return None
    return _recursive


needs_c = pytest.mark.skipif(_built() is None, reason="_recursive.c is not built here")


@needs_c
def test_compiled_spans_returns_the_built_module_when_current(monkeypatch):
    """A fresh lookup (empty cache) of a build whose SOURCE_SHA256 matches _recursive.c gives its spans.

    Kills assay.inputs.chunking.recursive.x_compiled_spans__mutmut_1 (cache test inverted: IndexError),
    x_compiled_spans__mutmut_2/3/4 (no source path), _7 (current = None), _8 (and), _10 (sha256(None)),
    _11 (== inverted), _12 (always None), _13 (and False)."""
    _recursive = _built()
    monkeypatch.setattr(recursive, "_COMPILED", [])
    assert recursive.compiled_spans() is _recursive.spans
    assert recursive._COMPILED == [_recursive.spans]
    assert recursive.compiled_spans() is _recursive.spans  # cached: the list is not grown again
    assert recursive._COMPILED == [_recursive.spans]


@needs_c
def test_compiled_spans_refuses_a_stale_build(monkeypatch):
    """A build whose SOURCE_SHA256 is not the hash of _recursive.c beside it is not used: None.

    Kills assay.inputs.chunking.recursive.x_compiled_spans__mutmut_5 and _6 (the source file name changed: not
    found, so taken as current), _9 (not exists() inverted) and _14 (or True)."""
    _recursive = _built()
    monkeypatch.setattr(recursive, "_COMPILED", [])
    monkeypatch.setattr(_recursive, "SOURCE_SHA256", "0" * 64)
    assert recursive.compiled_spans() is None
    assert recursive._COMPILED == [None]


@needs_c
def test_compiled_spans_without_the_c_source_trusts_the_build(monkeypatch, tmp_path):
    """Installed without _recursive.c beside the module (a wheel): the build is used, whatever its hash.

    Kills assay.inputs.chunking.recursive.x_compiled_spans__mutmut_9 (exists() inverted: reads a missing file)."""
    _recursive = _built()
    monkeypatch.setattr(recursive, "_COMPILED", [])
    monkeypatch.setattr(_recursive, "SOURCE_SHA256", "0" * 64)
    monkeypatch.setattr(recursive, "__file__", str(tmp_path / "recursive.py"))
    assert recursive.compiled_spans() is _recursive.spans


def test_compiled_spans_when_the_module_cannot_be_imported(monkeypatch):
    """No build (ImportError): None, cached.

    Kills the ImportError-path mutants of assay.inputs.chunking.recursive.x_compiled_spans."""
    monkeypatch.setattr(recursive, "_COMPILED", [])
    monkeypatch.delattr(chunking, "_recursive", raising=False)
    monkeypatch.setitem(sys.modules, "assay.inputs.chunking._recursive", None)
    assert recursive.compiled_spans() is None
    assert recursive._COMPILED == [None]


def test_spans_uses_the_compiled_function_when_there_is_one(monkeypatch):
    """RecursiveChunker.spans returns what the compiled function returns, called with (text, size, overlap).

    Kills assay.inputs.chunking.recursive.xǁRecursiveChunkerǁspans__mutmut_1 (compiled = None: Python path) and
    xǁRecursiveChunkerǁspans__mutmut_2 (is None inverted)."""
    calls = []

    def fake(text, size, overlap):
        calls.append((text, size, overlap))
        return [(0, 1)]

    monkeypatch.setattr(recursive, "_COMPILED", [fake])
    assert RecursiveChunker(5, 2).spans("abc def ghi") == [(0, 1)]
    assert calls == [("abc def ghi", 5, 2)]


def test_spans_falls_back_to_python(monkeypatch):
    """Without a build, RecursiveChunker.spans is python_spans(text, size, overlap): the reference's spans.

    Kills assay.inputs.chunking.recursive.xǁRecursiveChunkerǁspans__mutmut_9 to _14 (arguments dropped or None)."""
    monkeypatch.setattr(recursive, "_COMPILED", [None])
    text = "One two three. Four five six seven! Eight nine ten? Eleven twelve thirteen fourteen."
    assert RecursiveChunker(20, 7).spans(text) == reference_spans(text, 20, 7)
    assert RecursiveChunker(20, 7).spans(text) == [(0, 14), (15, 35), (36, 51), (52, 65), (59, 74), (75, 84)]


# -- mark search ------------------------------------------------------------------------------------

def test_punct_after_exact():
    """The first of . ! ? in [i, end), or -1.

    Kills assay.inputs.chunking.recursive.x__punct_after__mutmut_4 and _7 (end dropped), _12 (stop = -1 when no
    '.'), _13/_14 ('.' at 0 ignored), _15 ('X' counted), _24/_25 ('!' at 0 ignored)."""
    assert _punct_after("ab.", 0, 2) == -1
    assert _punct_after("ab!", 0, 3) == 2
    assert _punct_after(".ab!", 0, 4) == 0
    assert _punct_after("aX.", 0, 3) == 2
    assert _punct_after("!a.", 0, 3) == 0
    assert _punct_after("a?b!c.", 0, 6) == 1
    assert _punct_after("a?b!c.", 2, 6) == 3


def test_punct_before_exact():
    """The last of . ! ? in [lo, i), or -1.

    Kills assay.inputs.chunking.recursive.x__punct_before__mutmut_13 (floor below the '.'), _14 (floor past the
    next position), _17 ('X' counted), _26/_27 ('!' at 0 ignored), _29/_30 (floor after '!' off by one)."""
    assert _punct_before("!.", 0, 2) == 1
    assert _punct_before(".!", 0, 2) == 1
    assert _punct_before("Xa", 0, 2) == -1
    assert _punct_before("!a", 0, 2) == 0
    assert _punct_before("?!", 0, 2) == 1
    assert _punct_before("!?", 0, 2) == 1
    assert _punct_before("a.b?c!d", 0, 7) == 5
    assert _punct_before("a.b?c!d", 0, 5) == 3


def test_sentence_chunk_pattern_is_built_once_per_size(monkeypatch):
    """The longest stretch of at most size characters ending a sentence; compiled once per size.

    Kills assay.inputs.chunking.recursive.x__sentence_chunk__mutmut_1 and _2 (cache never read: a new pattern after
    re.purge), _3 (None returned), _4 (None stored), _5, _6, _7 (pattern text), _8, _9 and _10 (length)."""
    import re

    monkeypatch.setattr(recursive, "_SENTENCE_CHUNKS", {})
    pattern = _sentence_chunk(5)
    assert pattern.pattern == r"(?s:.){0,4}[.!?](?=\s+\S)"
    assert pattern.match("abcd. ef").end() == 5
    assert pattern.match("abcde. f") is None
    re.purge()
    assert _sentence_chunk(5) is pattern
    assert recursive._SENTENCE_CHUNKS == {5: pattern}


# -- headings ---------------------------------------------------------------------------------------

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


# -- searches near a position -----------------------------------------------------------------------

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


def test_is_heading_piece_exact_cases():
    """Pieces the body-text shortcut must not reject, and scans that stop at anything but a space or tab.

    Kills assay.inputs.chunking.recursive.x__is_heading_piece__mutmut_21 and _24 (an rST underline of closing
    marks taken as a sentence end), _33 and _40 ('X' skipped like a space before / after the piece),
    _65 ('X' skipped after an overline) and _67 (the look-ahead after an overline walks backwards)."""
    assert recursive._is_heading_piece("Title\n:::", 0, 9) is True
    assert recursive._is_heading_piece("Title\n...", 0, 9) is True
    assert recursive._is_heading_piece("\nXTitle", 2, 7) is False
    assert recursive._is_heading_piece("Title X\n", 0, 5) is False
    assert recursive._is_heading_piece("===\nX\n", 0, 3) is True
    assert recursive._is_heading_piece("===\n  Title", 0, 3) is True


def test_sentence_cuts_around_a_mark_at_position_zero():
    """A mark at the text's first character ends a sentence too (before x, and as the first mark after x).

    Kills assay.inputs.chunking.recursive.x__sentence_cuts_around__mutmut_6 (floor 1 for a part at 0), _23 and _24
    (a mark at 0 taken as none, before x), _87 and _88 (the same, after x), _72 (run > a)."""
    assert _sentence_cuts_around(". b c", 0, 5, 4, 256) == (2, 5)
    assert _sentence_cuts_around("! b", 0, 3, 0, 256) == (0, 2)
    # x on the whitespace right after a mark that sits just before the part: that run is a cut
    # (kills x__sentence_cuts_around__mutmut_72, run > a)
    assert _sentence_cuts_around("a. b c", 2, 6, 2, 256) == (2, 3)


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
