"""Recursive chunking: separator preference, size limits, headings kept with their text, overlap, coverage.

The property tests run seeded random documents whose headings the generator knows,
so "no bare heading" and "over size only by a glued heading" are checked exactly.
"""

import random
import sys

import pytest

from assay.inputs.chunking.recursive import RecursiveChunker, _punct_after, _punct_before, _sentence_chunk, is_heading
from assay.core.errors import ConfigError
import assay.inputs.chunking as chunking
from assay.inputs.chunking import recursive
from assay.inputs.chunking.recursive import _sentence_cuts_around, _text_to, _trim


def chunk(text, size, overlap=0, doc_id="d.md"):
    return RecursiveChunker(size, overlap).chunk(doc_id, text)


def texts(chunks):
    return [c.text for c in chunks]


def assert_valid(doc_id, text, chunks, overlap):
    """Offsets, trimming, ids, order and coverage: what holds for every text and every size."""
    for i, c in enumerate(chunks):
        assert c.ordinal == i and c.doc_id == doc_id
        assert 0 <= c.start < c.end <= len(text)
        assert c.text == text[c.start:c.end]
        assert c.text == c.text.strip()
        assert c.chunk_id == f"{doc_id}#{c.start}-{c.end}"
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    covered = [False] * len(text)
    for c in chunks:
        covered[c.start:c.end] = [True] * (c.end - c.start)
    missed = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missed, f"characters not in any chunk: {missed[:10]}"
    for a, b in zip(chunks, chunks[1:]):
        if overlap == 0:
            assert a.end <= b.start
        else:
            assert a.start < b.start and a.end < b.end
            assert a.end - b.start <= overlap


# -- is_heading -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "# Title", "###### Deep", "  ## Indented  ", "# One\n## Two",
    "Title\n=====", "Title\n-----", "Section\n~~~~~~~~~~", "=====\nTitle\n=====",
    "Overview", "Getting started with the store", "#hashtag",
])
def test_is_heading(text):
    assert is_heading(text)


@pytest.mark.parametrize("text", [
    "", "   \n ", "A sentence.", "Ends with colon:", "Question?",
    "- list item", "* bullet", "1. numbered", "2) numbered", "> quote", "| a | b |",
    "x" * 81, "Two lines\nof body text", "# Title\nbody line", "Title\nText\n=====",
])
def test_is_not_heading(text):
    assert not is_heading(text)


# -- whole documents --------------------------------------------------------------------------

def test_a_document_no_longer_than_size_is_one_trimmed_chunk():
    text = "\n\n# Title\n\nshort body without punctuation\n\n## Another\n  \n"
    (c,) = chunk(text, size=len(text.strip()))
    assert (c.start, c.end) == (2, len(text.rstrip()))
    assert c.text == text.strip()


def test_a_document_that_is_only_a_heading_is_still_one_chunk():
    assert texts(chunk("# Just a heading\n", size=50)) == ["# Just a heading"]


@pytest.mark.parametrize("text", ["", " ", "\n\n\t\n"])
def test_blank_documents_give_no_chunks(text):
    assert chunk(text, size=10) == []


# -- where it splits --------------------------------------------------------------------------

def test_paragraph_boundaries_come_first():
    p1, p2, p3 = ("First paragraph has words.", "Second paragraph, more words.", "Third one is here too.")
    text = f"{p1}\n\n{p2}\n\n{p3}\n"
    assert texts(chunk(text, size=len(p1) + 2 + len(p2))) == [f"{p1}\n\n{p2}", p3]
    # too small for two paragraphs: one each, even though a line-level split would pack tighter
    assert texts(chunk(text, size=len(p2))) == [p1, p2, p3]


def test_a_long_paragraph_splits_at_lines_before_sentences():
    lines = ["Line one ends here. It has two sentences.", "Line two is on its own.", "Line three ends it."]
    text = "\n".join(lines)
    out = texts(chunk(text, size=len(lines[0]) + 1 + len(lines[1])))
    assert out == [lines[0] + "\n" + lines[1], lines[2]]


def test_a_long_line_splits_at_sentences_before_words():
    sentences = ["The first sentence is short.", "The second one asks why?", "The third exclaims!", "Done."]
    text = " ".join(sentences)
    out = texts(chunk(text, size=len(sentences[0]) + 1 + len(sentences[1])))
    assert out == [sentences[0] + " " + sentences[1], sentences[2] + " " + sentences[3]]


def test_a_long_sentence_splits_at_words():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa."
    out = chunk(text, size=17)
    assert texts(out) == ["alpha beta gamma", "delta epsilon", "zeta eta theta", "iota kappa."]
    for c in out:
        # never inside a word
        assert c.start == 0 or text[c.start - 1] == " "
        assert c.end == len(text) or text[c.end] == " "


def test_a_word_longer_than_size_is_cut_at_size():
    text = "ab " + "x" * 25 + " cd."
    assert texts(chunk(text, size=10)) == ["ab", "x" * 10, "x" * 10, "x" * 5 + " cd."]


def test_a_long_run_of_words_without_punctuation_respects_the_size():
    # words cut from a line are body text, not "short lines": they must not glue into one giant chunk
    text = " ".join(["word"] * 30)
    out = chunk(text, size=20)
    assert texts(out) == ["word word word word"] * 7 + ["word word"]


def test_lines_of_a_wrapped_paragraph_are_not_headings():
    line = "this is a wrapped line of text that goes on"
    text = "\n".join([line] * 6) + "."
    out = chunk(text, size=60)
    assert texts(out) == [line] * 5 + [line + "."]


def test_table_rows_are_not_headings():
    rows = [f"key.number_{i}   {i * 7:<6}  Description of setting {i}" for i in range(12)]
    text = "Settings\n========\n\n" + "\n".join(rows) + "\n"
    out = chunk(text, size=120)
    for c in out:
        assert len(c.text) <= 120 + len("Settings\n========\n\n")
    assert max(len(c.text) for c in out[1:]) <= 120
    assert out[0].text.startswith("Settings\n========\n\n" + rows[0])


# -- headings stay with their text ------------------------------------------------------------

def test_a_markdown_heading_is_glued_to_the_following_paragraph():
    body = "Body sentence number one is here. " * 2 + "End."
    text = f"Intro paragraph that is long enough.\n\n## Section heading\n\n{body}\n"
    out = chunk(text, size=len(body))
    assert texts(out) == ["Intro paragraph that is long enough.", f"## Section heading\n\n{body}"]
    assert len(out[1].text) - len(body) == len("## Section heading\n\n")


def test_an_rst_title_is_glued_and_never_cut_from_its_underline():
    body = "A body sentence follows the title. Then another sentence ends it."
    for text in (f"Intro text here.\n\nTitle\n=====\n\n{body}", f"Intro text here.\n\nTitle\n-----\n{body}",
                 f"Intro text here.\n\n=====\nTitle\n=====\n{body}"):
        out = chunk(text, size=len(body))
        assert out[0].text == "Intro text here."
        assert out[1].text.endswith(body) and "Title" in out[1].text
        for c in out:
            assert not is_heading(c.text), c.text


def test_a_lone_short_line_is_a_heading_glued_to_what_follows():
    body = "The cache keeps recently read pages. Its size is set in pages."
    text = f"Page cache\n\n{body}\n\nMore text follows here to pass the size."
    out = chunk(text, size=len(body))
    assert out[0].text == f"Page cache\n\n{body}"
    assert all(not is_heading(c.text) for c in out)


def test_consecutive_headings_all_glue_to_the_body():
    body = "Only this body sentence carries the content."
    text = f"# Part\n\n## Chapter\n\n### Section\n{body}\n\nTail sentence to exceed size."
    out = chunk(text, size=len(body))
    assert out[0].text == f"# Part\n\n## Chapter\n\n### Section\n{body}"
    assert out[1].text == "Tail sentence to exceed size."


def test_a_trailing_heading_joins_the_text_before_it():
    first, second = "First paragraph sentence here.", "Second paragraph sentence."
    text = f"{first}\n\n{second}\n\n## Appendix\n"
    out = chunk(text, size=len(first))
    assert texts(out) == [first, f"{second}\n\n## Appendix"]


def test_blank_lines_between_a_heading_and_its_body_do_not_strand_the_heading():
    # the paragraph before the body splits at lines, so blank lines become pieces of their own
    text = "Line one is long.\n# Head\n\n\nBody text is here."
    assert texts(chunk(text, size=18)) == ["Line one is long.", "# Head\n\n\nBody text is here."]


def test_blank_lines_before_a_trailing_heading_do_not_strand_it():
    text = "Line one is here.\nLine two is here.\n\n\n## Appendix"
    assert texts(chunk(text, size=17)) == ["Line one is here.", "Line two is here.\n\n\n## Appendix"]


def test_a_code_fence_is_not_an_underline():
    text = ("```\nfirst_command --flag\nsecond_command --flag\nthird_command --flag\n```\n\n"
            "After the block, prose follows here.")
    out = chunk(text, size=45)
    (last_code,) = [c.text for c in out if "third_command" in c.text]
    assert "After the block" not in last_code
    assert all(len(c.text) <= 45 for c in out)


def test_a_horizontal_rule_is_not_glued_forward():
    # only an rST overline (a title on the very next line) is glued forward like a heading
    text = "Some closing words of the text.\n\n---\n\nA footer sentence, long enough."
    out = chunk(text, size=len("Some closing words of the text.\n\n---"))
    assert texts(out) == ["Some closing words of the text.\n\n---", "A footer sentence, long enough."]


# -- overlap ----------------------------------------------------------------------------------

def test_overlap_carries_whole_trailing_pieces():
    sentences = [f"Sentence {w} ends." for w in ("one", "two", "six", "ten", "red", "sky")]  # 18 chars each
    text = " ".join(sentences)
    out = texts(chunk(text, size=56, overlap=20))
    # three sentences fit in 56; one whole sentence (18 <= 20) is carried, two (37) would not be
    assert out == [" ".join(sentences[0:3]), " ".join(sentences[2:5]), " ".join(sentences[4:6])]
    assert texts(chunk(text, size=56, overlap=17)) == [" ".join(sentences[0:3]), " ".join(sentences[3:6])]
    assert texts(chunk(text, size=56, overlap=40)) == [
        " ".join(sentences[0:3]), " ".join(sentences[1:4]), " ".join(sentences[2:5]), " ".join(sentences[3:6])]


def test_overlap_never_pushes_a_chunk_over_size():
    text = " ".join(f"Word{i:02d}." for i in range(40))
    for overlap in (0, 5, 20, 49):
        out = chunk(text, size=50, overlap=overlap)
        assert all(len(c.text) <= 50 for c in out)
        assert_valid("d.md", text, out, overlap)


# -- options ----------------------------------------------------------------------------------

@pytest.mark.parametrize("size, overlap", [(0, 0), (-1, 0), (10, -1), (10, 10), (10, 50)])
def test_bad_size_or_overlap_is_a_config_error(size, overlap):
    with pytest.raises(ConfigError):
        RecursiveChunker(size, overlap)


def test_options_and_config():
    assert RecursiveChunker.from_options().config() == {"name": "recursive", "size": 800, "overlap": 0}
    assert RecursiveChunker.from_options(size=100, overlap=10).config() == {
        "name": "recursive", "size": 100, "overlap": 10}


def test_chunk_ids_follow_the_doc_and_span():
    text = "One sentence here. " * 20
    out = chunk(text, size=50, doc_id="dir/sub/file.rst")
    assert [c.chunk_id for c in out] == [f"dir/sub/file.rst#{c.start}-{c.end}" for c in out]
    assert len({c.chunk_id for c in out}) == len(out) > 1


# -- properties over random documents ---------------------------------------------------------

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma tau upsilon omega".split()


def _title(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))).capitalize()


def _sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))).capitalize() + rng.choice(".!?")


def _clean_line(rng):
    line = " ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))
    return ("- " + line) if rng.random() < 0.15 else line


def _messy_line(rng):
    words = []
    for _ in range(rng.randint(1, 14)):
        r = rng.random()
        words.append("x" * rng.randint(40, 160) if r < 0.03 else rng.choice(WORDS) + ("." if r > 0.93 else ""))
    return " ".join(words)


def _paragraph(rng, messy):
    if messy:  # at least two lines, so never a lone short line
        return "\n".join(_messy_line(rng) for _ in range(rng.randint(2, 6)))
    return "\n".join(_clean_line(rng) for _ in range(rng.randint(1, 5)))


def random_document(rng, messy):
    """A document and the [start, end) of every heading in it, as the generator wrote them."""
    parts, headings, pos = [], [], 0

    def add(text, heading=False):
        nonlocal pos
        if heading:
            headings.append((pos, pos + len(text)))
        parts.append(text)
        pos += len(text)

    add(rng.choice(["", "\n", "  \n\n"]))
    blocks = [rng.choice(["heading", "heading", "body", "body", "body"]) for _ in range(rng.randint(2, 12))]
    if "body" not in blocks:
        blocks.append("body")
    for i, kind in enumerate(blocks):
        if i:
            add(rng.choice(["\n\n", "\n\n\n", "\n \n", "\n\t\n  "]))
        if kind == "body":
            add(_paragraph(rng, messy))
            continue
        title, mark = _title(rng), rng.choice("=-~^*#")
        style = rng.choice(["md", "md", "underline", "overline", "lone", "md+body", "underline+body"])
        if style == "md":
            add("#" * rng.randint(1, 6) + " " + title, heading=True)
        elif style == "underline":
            add(title + "\n" + mark * len(title), heading=True)
        elif style == "overline":
            add(mark * len(title) + "\n" + title + "\n" + mark * len(title), heading=True)
        elif style == "lone":
            add(title, heading=True)
        elif style == "md+body":
            add("#" * rng.randint(1, 6) + " " + title, heading=True)
            add("\n" + _paragraph(rng, messy))
        else:
            add(title + "\n" + "-" * len(title), heading=True)
            add("\n" + _paragraph(rng, messy))
    add(rng.choice(["", "\n", "\n\n  "]))
    return "".join(parts), headings


def body_extent(text, start, end, headings):
    """[start, end) of a chunk without the headings (and whitespace) at either end."""
    changed = True
    while changed:
        changed = False
        for hs, he in headings:
            if hs <= start < he:
                start, changed = he, True
            if hs < end <= he:
                end, changed = hs, True
        while start < end and text[start].isspace():
            start, changed = start + 1, True
        while end > start and text[end - 1].isspace():
            end, changed = end - 1, True
    return start, end


def check_document(text, headings, size, overlap, clean):
    chunks = chunk(text, size, overlap)
    assert_valid("d.md", text, chunks, overlap)
    if len(text.strip()) <= size:
        assert texts(chunks) == [text.strip()]
        return
    for c in chunks:
        start, end = body_extent(text, c.start, c.end, headings)
        assert end > start, f"bare heading chunk: {c.text!r}"
        # over size only by the headings glued on; the body itself fits
        assert end - start <= size, f"{len(c.text)} > {size}: {c.text!r}"
        if clean:
            assert not is_heading(c.text), c.text


@pytest.mark.parametrize("seed", range(4))
def test_random_clean_documents(seed):
    """Body lines end in punctuation and sentences fit the size: no chunk may even look like a heading."""
    rng = random.Random(seed)
    for _ in range(60):
        text, headings = random_document(rng, messy=False)
        size = rng.randint(90, 400)
        overlap = rng.choice([0, 0, rng.randint(0, size - 1)])
        check_document(text, headings, size, overlap, clean=True)


@pytest.mark.parametrize("seed", range(4))
def test_random_messy_documents(seed):
    """Wrapped lines without punctuation, long runs of words, words longer than the size."""
    rng = random.Random(100 + seed)
    for _ in range(60):
        text, headings = random_document(rng, messy=True)
        size = rng.randint(60, 300)
        overlap = rng.choice([0, 0, rng.randint(0, size - 1)])
        check_document(text, headings, size, overlap, clean=False)


def test_random_noise_keeps_offsets_order_and_coverage():
    rng = random.Random(7)
    alphabet = "ab c. #=-\n\n\t!?"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        size = rng.randint(1, 60)
        overlap = rng.choice([0, rng.randint(0, size - 1)])
        chunks = chunk(text, size, overlap)
        assert_valid("d.md", text, chunks, overlap)
        if text.strip() and len(text.strip()) <= size:
            assert texts(chunks) == [text.strip()]


# compiled_spans and RecursiveChunker.spans: which implementation runs; the search helpers of the
# Python path (python_spans) pinned to exact return values, None (gave up) included


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


def test_punct_after_is_the_first_sentence_mark_in_the_range():
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


def test_punct_before_is_the_last_sentence_mark_in_the_range():
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


def test_a_heading_piece_may_end_in_an_underline_of_marks_and_its_scans_stop_at_text():
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


# the position helpers of the Python path, pinned to their documented values


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
