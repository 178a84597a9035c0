"""Recursive chunking: separator preference, size limits, headings kept with their text, overlap, coverage.

The property tests run seeded random documents whose headings the generator knows,
so "no bare heading" and "over size only by a glued heading" are checked exactly.
"""

import random

import pytest

from assay.inputs.chunking.recursive import RecursiveChunker, is_heading
from assay.core.errors import ConfigError


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
