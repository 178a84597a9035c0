"""The nearest passage to a quote that does not resolve: similarity, location, snippet."""

import random
import time

from assay.inputs.judgments.nearest import Nearest, nearest_passage

DOC = (
    "Intro line.\n"
    "\n"
    "The cache holds 512 pages by\n"
    "default, and it is   flushed every second.\n"
    "Other text here about nothing.\n"
)


def test_an_edited_sentence_is_found_where_it_is():
    found = nearest_passage(DOC, "The cache holds 256 pages by default, and it is flushed every second.")
    assert isinstance(found, Nearest)
    start = DOC.index("The cache")
    end = DOC.index("second.") + len("second.")
    assert (found.start, found.end, found.line) == (start, end, 3)
    assert found.snippet == "The cache holds 512 pages by default, and it is flushed every second."
    assert 0.95 < found.similarity < 1


def test_a_passage_with_words_added_or_removed_is_cut_at_word_boundaries():
    found = nearest_passage(DOC, "it is flushed each second")
    assert DOC[found.start:found.end] == "it is   flushed every second."
    assert found.line == 4
    assert found.describe() == f"similarity {found.similarity:.2f}, line 4, chars {found.start}-{found.end}"


def test_an_exact_quote_is_its_own_nearest_passage():
    found = nearest_passage(DOC, "Other text here")
    assert (found.similarity, DOC[found.start:found.end]) == (1.0, "Other text here")


def test_nothing_to_compare_gives_none():
    assert nearest_passage("", "x") is None
    assert nearest_passage("   \n", "x") is None
    assert nearest_passage("text", " \t ") is None


def test_a_quote_longer_than_the_document_still_gives_a_passage():
    found = nearest_passage("ab", "a much longer quote than the text")
    assert (found.start, found.end, found.snippet) == (0, 2, "ab")


def test_a_large_document_answers_quickly():
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    text = " ".join(rng.choice(words) for _ in range(200_000))[:1_000_000]
    target = text.index(" ", 600_000) + 1
    sentence = text[target:text.index(" ", target + 80)]
    edited = sentence[:30] + "Z" + sentence[31:]
    # CPU time, not wall time: what the search costs, whatever else the machine runs (0.01-0.1 s measured on
    # the 2-core development machine at load 8; the bounds leave 20 times that)
    started = time.process_time()
    found = nearest_passage(text, edited)
    elapsed = time.process_time() - started
    assert (found.start, found.end) == (target, target + len(sentence))
    assert elapsed < 2.0, elapsed
    # a long quote: its start and end are refined one after the other, not pair by pair
    long_passage = text[target:text.index(" ", target + 3000)]
    started = time.process_time()
    found = nearest_passage(text, long_passage[:1500] + "ZZZ" + long_passage[1503:])
    elapsed = time.process_time() - started
    assert (found.start, found.end) == (target, target + len(long_passage))
    assert elapsed < 3.0, elapsed


# -- the closest corpus paths to a gold doc that is not there ---------------------------------

PATHS = ["about.md", "faq/payments.md", "guides/returns-policy.md", "returns.md", "shipping.md"]


def test_a_path_in_another_case_or_under_the_corpus_directory_name_comes_first():
    from assay.inputs.judgments.nearest import closest_paths

    assert closest_paths("Returns.MD", PATHS)[0] == "returns.md"
    # written from the project root, not the corpus directory: the path with its leading directories dropped
    assert closest_paths("corpus/faq/payments.md", PATHS)[0] == "faq/payments.md"
    assert closest_paths("docs/corpus/shipping.md", PATHS)[0] == "shipping.md"


def test_similar_paths_by_whole_path_or_file_name_best_first():
    from assay.inputs.judgments.nearest import closest_paths

    assert closest_paths("corpus/return.md", PATHS) == ["returns.md", "guides/returns-policy.md"]
    assert closest_paths("shiping.md", PATHS) == ["shipping.md"]
    assert closest_paths("paymnts.md", PATHS) == ["faq/payments.md"]  # the file name alone is close
    assert closest_paths("returns", PATHS) == ["returns.md"]
    assert closest_paths("x.md", [f"{c}.md" for c in "abcd"], limit=3) == ["a.md", "b.md", "c.md"]  # ties by path


def test_nothing_close_is_nothing_offered():
    from assay.inputs.judgments.nearest import closest_paths

    assert closest_paths("minutes-2024.pdf", PATHS) == []
    assert closest_paths("a.md", []) == []
