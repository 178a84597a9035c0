"""Kills for the surviving mutants of assay.inputs.chunking.recursive (the Python twin, python_spans, of _recursive.c).

Each case is a text built (or found by generating texts and shrinking) to reach one branch of the Python
path: a heading glued to a long line that starts with blanks, a sentence mark inside the pieces before a
long paragraph, a heading that ends with a mark, a paragraph with blanks before its break. python_spans is
held to the verbatim reference (tests/chunking/reference_recursive.py) and to the spans it gives, pinned;
the position helpers are pinned to their documented values.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chunking"))  # reference_recursive (no __init__)
from reference_recursive import RecursiveChunker as Reference  # noqa: E402

from assay.inputs.chunking.recursive import _Document, _text_to, _trim, is_heading, python_spans  # noqa: E402


def reference_spans(text, size, overlap):
    return [(c.start, c.end) for c in Reference(size, overlap).chunk("d", text)]


def assert_spans(text, size, overlap, expected):
    """python_spans equals the reference's spans, and those are the pinned ones."""
    assert reference_spans(text, size, overlap) == expected
    assert python_spans(text, size, overlap) == expected, (size, overlap, text)


# -- position helpers -------------------------------------------------------------------------------

def test_text_to_from_the_start_and_on_an_empty_text():
    """One past the last non-whitespace position in [floor, t), or floor (0 unless given).

    Kills assay.inputs.chunking.recursive.x__text_to__mutmut_1 (default floor 1: a text opening with blanks ends at
    1) and x__text_to__mutmut_2 (t < floor: an empty text is read at index -1)."""
    assert _text_to("  a", 2) == 0
    assert _text_to(" ", 1) == 0
    assert _text_to("ab  ", 4) == 2
    assert _text_to("", 0) == 0
    assert _text_to("ab", 1, 1) == 1


def test_trim_of_a_blank_span_is_empty_at_its_end():
    """_trim of [start, end) that is all whitespace: (end, end), never an end before the start.

    Kills assay.inputs.chunking.recursive.x__trim__mutmut_13 (the end searched from 0, not from the start: it
    lands on the text before the span)."""
    assert _trim("a  ", 1, 3) == (3, 3)
    assert _trim("a  b  ", 1, 6) == (3, 4)


def test_is_heading_a_lone_line_of_exactly_80_characters():
    """A lone line without closing punctuation is a heading up to 80 characters, 80 included.

    Kills assay.inputs.chunking.recursive.x_is_heading__mutmut_28 (len < 80)."""
    assert is_heading("T" * 80) is True
    assert is_heading("T" * 81) is False
    assert is_heading("  " + "T" * 80 + "\n") is True


# -- python_spans on built texts --------------------------------------------------------------------

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


# -- _Document.paragraphs ---------------------------------------------------------------------------

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


# -- _Document.glue ---------------------------------------------------------------------------------

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
