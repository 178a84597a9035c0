"""Fixed-size character windows: offsets, overlap, the last window, trimming, bad options."""

import random

import pytest

from assay.inputs.chunking.fixed import FixedChunker
from assay.core.errors import ConfigError


def assert_valid(doc_id, text, chunks):
    """What every chunker promises: exact text at exact offsets, trimmed, non-empty, unique ids."""
    for i, c in enumerate(chunks):
        assert c.ordinal == i and c.doc_id == doc_id
        assert 0 <= c.start < c.end <= len(text)
        assert c.text == text[c.start:c.end]
        assert c.text == c.text.strip()
        assert c.chunk_id == f"{doc_id}#{c.start}-{c.end}"
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def spans(chunks):
    return [(c.start, c.end) for c in chunks]


def test_windows_start_every_size_minus_overlap_and_the_last_ends_at_the_text_end():
    text = "abcdefghij"
    chunks = FixedChunker(4, 1).chunk("d.md", text)
    assert spans(chunks) == [(0, 4), (3, 7), (6, 10)]
    assert [c.text for c in chunks] == ["abcd", "defg", "ghij"]
    assert_valid("d.md", text, chunks)


def test_a_short_last_window_ends_at_the_text_end():
    text = "abcdefghijk"  # 11 characters: windows at 0, 3, 6, 9
    assert spans(FixedChunker(4, 1).chunk("d", text)) == [(0, 4), (3, 7), (6, 10), (9, 11)]


def test_no_overlap_partitions_the_text():
    text = "0123456789" * 3
    chunks = FixedChunker(7, 0).chunk("d", text)
    assert spans(chunks) == [(0, 7), (7, 14), (14, 21), (21, 28), (28, 30)]
    assert "".join(c.text for c in chunks) == text


def test_text_shorter_than_size_is_one_window():
    assert spans(FixedChunker(100, 10).chunk("d", "short text")) == [(0, 10)]


def test_windows_are_trimmed_and_offsets_follow():
    text = "ab  \n  cd  ef"
    chunks = FixedChunker(5, 0).chunk("d", text)
    # raw windows [0,5) "ab  \n", [5,10) "  cd ", [10,13) " ef"
    assert [(c.start, c.end, c.text) for c in chunks] == [(0, 2, "ab"), (7, 9, "cd"), (11, 13, "ef")]
    assert_valid("d", text, chunks)


def test_whitespace_only_windows_are_dropped():
    text = "abc" + " " * 20 + "\n\n\t" + "xyz"
    chunks = FixedChunker(5, 0).chunk("d", text)
    assert [c.text for c in chunks] == ["abc", "xyz"]
    assert [c.ordinal for c in chunks] == [0, 1]


def test_windows_that_trim_to_the_same_span_appear_once():
    # with a large overlap, the windows after "a" trim to the same span until "b" comes into view
    text = "a" + " " * 6 + "b"
    chunks = FixedChunker(4, 3).chunk("d", text)
    assert [c.text for c in chunks] == ["a", "b"]
    assert_valid("d", text, chunks)


def test_empty_and_whitespace_text_give_no_chunks():
    assert FixedChunker(10, 2).chunk("d", "") == []
    assert FixedChunker(10, 2).chunk("d", " \n\t \n") == []


@pytest.mark.parametrize("size, overlap", [(0, 0), (-5, 0), (10, -1), (10, 10), (10, 11), (1, 1)])
def test_bad_size_or_overlap_is_a_config_error(size, overlap):
    with pytest.raises(ConfigError) as info:
        FixedChunker(size, overlap)
    assert str(size if size < 1 else overlap) in str(info.value)


def test_options_and_config():
    chunker = FixedChunker.from_options()
    assert (chunker.size, chunker.overlap) == (800, 100)
    assert FixedChunker.from_options(size=50, overlap=0).config() == {"name": "fixed", "size": 50, "overlap": 0}
    # the default overlap is 100 characters, or a quarter of the size when that is smaller
    assert FixedChunker.from_options(size=1000).overlap == 100
    assert FixedChunker.from_options(size=200).overlap == 50
    assert FixedChunker.from_options(size=3).overlap == 0
    assert FixedChunker.from_options(size=1).overlap == 0
    with pytest.raises(ConfigError):
        FixedChunker.from_options(size=50, overlap=50)


def test_random_texts_without_whitespace_give_exact_windows():
    rng = random.Random(1)
    for _ in range(300):
        n = rng.randint(1, 200)
        text = "".join(rng.choice("abcxyz.#") for _ in range(n))
        size = rng.randint(1, 60)
        overlap = rng.randint(0, size - 1)
        step = size - overlap
        chunks = FixedChunker(size, overlap).chunk("d", text)
        assert_valid("d", text, chunks)
        expected, start = [], 0
        while True:
            expected.append((start, min(start + size, n)))
            if start + size >= n:
                break
            start += step
        assert spans(chunks) == expected
        assert chunks[-1].end == n


def test_random_texts_cover_every_non_whitespace_character():
    rng = random.Random(2)
    alphabet = "ab c\n\t.#"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 150)))
        size = rng.randint(1, 40)
        overlap = rng.randint(0, size - 1)
        chunks = FixedChunker(size, overlap).chunk("d", text)
        assert_valid("d", text, chunks)
        for c in chunks:
            assert c.end - c.start <= size
        assert spans(chunks) == sorted(set(spans(chunks)))
        covered = set()
        for c in chunks:
            covered.update(range(c.start, c.end))
        assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered
        if text.strip():
            assert chunks[-1].end == len(text.rstrip())
        if overlap == 0:
            assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))
