"""The normalised view of a text: what is folded, skipped and collapsed, and every offset mapping back."""

import pytest

from assay.inputs.judgments.markup import markup_edits, markup_syntax
from assay.inputs.judgments.normalize import Rewrite, _merge, fold_char, normalize, views
from assay.inputs.judgments.resolve import find_quote


def rendered(text, syntax):
    return normalize(text, syntax, rendered=True).text


def check_map(view):
    """Every character of the view comes from a range of the original that, folded alone, holds it."""
    for i, ch in enumerate(view.text):
        start, end = view.span(i, i + 1)
        assert 0 <= start < end <= len(view.original)
        source = view.original[start:end]
        if ch == " ":
            assert not source.strip() or source != source.strip() or len(source) > 1 or source in "\u200b\u00ad", \
                (i, source)
        else:
            assert ch in normalize(source).text or ch in source, (i, ch, source)


# -- characters -------------------------------------------------------------------------------

@pytest.mark.parametrize("ch, folded", [
    ("\u2018", "'"), ("\u2019", "'"), ("\u201a", "'"), ("\u2032", "'"), ("\u02bc", "'"),
    ("\u201c", '"'), ("\u201d", '"'), ("\u201e", '"'), ("\u2033", '"'),
    ("\u2010", "-"), ("\u2011", "-"), ("\u2013", "-"), ("\u2014", "-"), ("\u2212", "-"),
    ("\u00ad", ""), ("\u200b", ""), ("\u200d", ""), ("\u2060", ""), ("\ufeff", ""),
    ("\ufb00", "ff"), ("\ufb01", "fi"), ("\ufb02", "fl"), ("\ufb03", "ffi"), ("\ufb04", "ffl"),
    ("\ufb05", "st"), ("\ufb06", "st"),
    ("\u2026", "..."), ("\uff21", "A"), ("\u2126", "\u03a9"),
])
def test_typographic_variants_fold(ch, folded):
    assert fold_char(ch) == folded


@pytest.mark.parametrize("ch", ["a", "'", "\u00e9", "\u00b2", "\u2082", "\u00bd", "\u2460", "\u3392", "\u00a8",
                                "\u00a0", "\u2003", "\u0301", "\u00ab"])
def test_what_changes_meaning_or_is_whitespace_stays(ch):
    # superscript two, subscript two, one half, circled one, a squared unit, a spacing diaeresis:
    # NFKC would change what they say; whitespace is the whitespace layer's; guillemets are not quotes
    assert fold_char(ch) is None


def test_a_ligature_expands_and_each_letter_maps_back_to_it():
    view = normalize("e\ufb03cient")
    assert view.text == "efficient"
    assert [view.span(i, i + 1) for i in range(4)] == [(0, 1), (1, 2), (1, 2), (1, 2)]
    assert view.span(2, 9) == (1, 7)  # "ficient" starts inside the ligature: the span takes all of it


def test_curly_quotes_dashes_and_invisible_characters_in_a_sentence():
    text = "It\u2019s \u201cfast\u201d \u2014 soft\u00adware with zero\u200bwidth\ufeff."
    view = normalize(text)
    assert view.text == "It's \"fast\" - software with zerowidth."
    check_map(view)
    start = view.text.index("software")
    assert view.span(start, start + len("software")) == (text.index("soft"), text.index("ware") + 4)


def test_whitespace_runs_of_any_kind_are_one_space():
    text = "a\u00a0b \t\n c\u2003\u2003d\u3000e"
    view = normalize(text)
    assert view.text == "a b c d e"
    assert view.span(3, 4) == (3, 7)  # the space after b is the whole run " \t\n "
    check_map(view)


def test_removed_characters_between_spaces_leave_one_space():
    view = normalize("a \u200b b")
    assert view.text == "a b" and view.span(1, 2) == (1, 4)


def test_combining_marks_compose_with_their_base():
    view = normalize("cafe\u0301 and caf\u00e9")
    assert view.text == "caf\u00e9 and caf\u00e9"
    assert view.span(0, 4) == (0, 5)


def test_plain_ascii_is_its_own_view():
    view = normalize("plain text, nothing to fold.")
    assert view.layers == () and view.text == view.original and view.span(3, 7) == (3, 7)


# -- PDF line-end hyphenation -----------------------------------------------------------------

def test_a_word_broken_at_a_line_end_is_joined_in_the_rendered_views():
    text = "an exam-\nple and a well-\n  known Hewlett-\nPackard, a soft\u00ad\nhyphen"
    plain, joined = views(text)
    assert plain.text == "an exam- ple and a well- known Hewlett- Packard, a soft\u00ad hyphen"
    assert not plain.breaks and joined.breaks
    # "wellknown": only a quote can say the hyphen was the word's own (find_quote tries both)
    assert joined.text == "an example and a wellknown Hewlett-Packard, a softhyphen"
    start = joined.text.index("example")
    assert joined.span(start, start + 7) == (3, 12)
    check_map(joined)


def test_a_hyphen_before_a_blank_line_or_a_digit_is_no_hyphenation():
    assert len(views("pre-\n\npost and 3-\n4")) == 1


# -- the map ----------------------------------------------------------------------------------

def test_a_rewrite_maps_replacements_removals_and_the_text_between():
    layer = Rewrite("ab--cd!ef", [(2, 4, ""), (6, 7, "XYZ")])
    assert (layer.source, layer.text) == ("ab--cd!ef", "abcdXYZef")
    assert [layer.span(i, i + 1) for i in range(len(layer.text))] == [
        (0, 1), (1, 2), (4, 5), (5, 6), (6, 7), (6, 7), (6, 7), (7, 8), (8, 9)]
    assert layer.span(1, 3) == (1, 5)  # "bc" spans the removed "--"


# -- markup -----------------------------------------------------------------------------------

@pytest.mark.parametrize("doc_id, syntax", [
    ("a.md", "markdown"), ("docs/A.MD", "markdown"), ("x.markdown", "markdown"), ("guide.rst", "rst"),
    ("a.txt", None), ("a.html", None), ("README", None), (None, None), ("md", None), ("a.md.txt", None),
])
def test_markup_is_skipped_by_extension(doc_id, syntax):
    assert markup_syntax(doc_id) == syntax


@pytest.mark.parametrize("source, shown", [
    ("has **support for both HTTP/1.1 and HTTP/2** today", "has support for both HTTP/1.1 and HTTP/2 today"),
    ("an *em* and _em_ and __strong__ and ~~gone~~", "an em and em and strong and gone"),
    ("***both*** and **nested *inner* words**", "both and nested inner words"),
    ("call `foo()` or ``a ` b`` now", "call foo() or a ` b now"),
    ("code `**not bold**` stays", "code **not bold** stays"),
    ("see [the docs](https://x.org/a_(b) \"Title\") and ![a chart](c.png)", "see the docs and a chart"),
    ("a [reference][ref] link", "a reference link"),
    ("mail <https://x.org/p> or <me@x.org>", "mail https://x.org/p or me@x.org"),
    ("<https://x.org/_a_/*b*> and _c_", "https://x.org/_a_/*b* and c"),
    ("an <b>inline</b> tag<br/> and <!-- a comment -->text", "an inline tag and text"),
    ("escaped \\*stars\\* and \\_under\\_", "escaped *stars* and _under_"),
    ("AT&amp;T &ldquo;quoted&rdquo; &#8212; dash", "AT&T \"quoted\" - dash"),
    ("snake_case_name and __init__ method", "snake_case_name and init method"),
    ("2 * 3 * 4 and a * b", "2 * 3 * 4 and a * b"),
    ("an unpaired *star and _score", "an unpaired *star and _score"),
    ("**bold\n\nacross** a blank line", "**bold across** a blank line"),
])
def test_markdown_inline_markup(source, shown):
    assert rendered(source, "markdown") == shown


def test_markdown_block_markers():
    source = (
        "# Install\n\n"
        "Setext title\n============\n\n"
        "> quoted *words*\n"
        "- a bullet\n  * nested\n1. first\n2) second\n- [x] done\n\n"
        "```python\nx = **1**\n```\n\n"
        "---\n\n"
        "| col a | col b |\n|---|:---:|\n| 1 | 2 |\n\n"
        "[ref]: https://x.org\n"
        "## Closing hashes ##\n"
    )
    assert rendered(source, "markdown") == (
        "Install Setext title quoted words a bullet nested first second done x = **1** col a col b 1 2 "
        "Closing hashes ")


@pytest.mark.parametrize("source, shown", [
    ("use ``literal *text*`` here", "use literal *text* here"),
    ("an *em* and **strong** word", "an em and strong word"),
    ("a `Link text <https://x.org>`_ and `anon <https://y.org>`__", "a Link text and anon"),
    ("see :func:`assay.run` and :ref:`the guide <guide>`", "see assay.run and the guide"),
    ("the `<https://x.org>`_ address", "the https://x.org address"),
    ("a name_ reference, a footnote [1]_ and snake_case", "a name reference, a footnote [1] and snake_case"),
    ("intra*word*stars stay", "intra*word*stars stay"),
    ("For example::\n\n    code", "For example: code"),
])
def test_rst_inline_markup(source, shown):
    assert rendered(source, "rst") == shown


def test_rst_block_markers():
    source = "=====\nTitle\n=====\n\nSection\n-------\n\n- item\n#. auto\n(2) two\n\n.. note:: Careful.\n\n.. _target: https://x.org\n"
    assert rendered(source, "rst") == " Title Section item auto two Careful. "


def test_markup_edits_leave_the_visible_text_where_it_is():
    source = "x **bold** [link](u) `code` y"
    edits = markup_edits(source, "markdown")
    assert all(source[a:b] in ("**", "[", "](u)", "`") for a, b, _ in edits)
    view = normalize(source, "markdown", rendered=True)
    start = view.text.index("bold link code")
    assert source[slice(*view.span(start, start + len("bold link code")))] == "bold** [link](u) `code"
    check_map(view)


def test_an_unknown_syntax_is_an_error():
    with pytest.raises(ValueError):
        markup_edits("x", "asciidoc")


def test_views_are_cached_by_text():
    text = "some *cached* text " * 10
    assert views(text, "markdown") is views(text, "markdown")
    assert len(views(text, "markdown")) == 2 and len(views(text)) == 1


# -- where one layer's edits meet ---------------------------------------------------------------

def test_edits_that_touch_are_both_kept_and_overlapping_ones_dropped():
    # an edit starting where the last taken one ends is kept; one starting inside it is dropped, whichever list
    # it came from; the lists are merged in order of start
    assert _merge([(4, 6, "")], [(0, 2, ""), (2, 8, "x"), (8, 9, "")]) == [(0, 2, ""), (2, 8, "x"), (8, 9, "")]
    assert _merge([(0, 3, "")], [(2, 4, "y"), (3, 5, "z")]) == [(0, 3, ""), (3, 5, "z")]
    assert _merge([(0, 5, "")], [(1, 2, "")]) == [(0, 5, "")]  # inside a longer one
    assert _merge([], []) == []


@pytest.mark.parametrize("source, shown, entity", [
    ("**&copy; 2024 Larch**", "\u00a9 2024 Larch", (2, 8)),  # emphasis ends where the entity starts
    ("**2024 &copy;**", "2024 \u00a9", (7, 13)),  # the entity ends where the emphasis closes
    ("_&ldquo;quoted_", '"quoted', (1, 8)),  # the entity is folded (curly to straight) too
    ("`x`&amp;`y`", "x&y", (3, 8)),  # code spans on both sides of an entity
])
def test_markup_and_entities_that_touch_are_both_rendered(source, shown, entity):
    view = normalize(source, "markdown", rendered=True)
    assert view.text == shown
    at = next(i for i, ch in enumerate(shown) if ch in "\u00a9\"&")
    assert view.span(at, at + 1) == entity  # the rendered character maps back to the whole entity


def test_a_quote_of_an_entity_inside_emphasis_resolves_to_the_source_text():
    text = "Footer: **&copy; 2024 Larch** all rights reserved."
    assert find_quote(text, "\u00a9 2024 Larch", "site.md") == [(10, 27)]
    assert text[10:27] == "&copy; 2024 Larch"
    assert find_quote(text, "\u00a9 2024 Larch", "site.txt") == []  # no markup syntax: the entity stays as typed


def test_an_entity_of_two_characters_is_folded_character_by_character():
    # &fjlig; is "fj" and &NotEqualTilde; a letter and a combining mark: each character stays, in order
    assert rendered("x &fjlig; y &ldquo;&NotEqualTilde;", "markdown") == "x fj y \"\u2242\u0338"
    view = normalize("x &fjlig; y", "markdown", rendered=True)
    assert [view.span(i, i + 1) for i in (2, 3)] == [(2, 9), (2, 9)]


def test_a_presentation_form_with_combining_marks_is_folded_then_composed():
    # full-width A + combining acute: A folded to ASCII, then composed with the accent into one letter
    view = normalize("\uff21\u0301b")
    assert view.text == "\u00c1b" and [view.span(i, i + 1) for i in range(2)] == [(0, 2), (2, 3)]
    # a ligature with a mark on it: fi, the mark composed onto its last letter, both mapping to the cluster
    view = normalize("\ufb01\u0301x")
    assert view.text == "f\u00edx" and [view.span(i, i + 1) for i in range(3)] == [(0, 2), (0, 2), (2, 3)]
    assert find_quote("a \uff21\u0301b c", "\u00c1b") == [(2, 5)]
