"""Context budgets: the tokenizer assay counts prompt tokens with, and the token tables it fills.

The unit of a budget is one word piece of all-MiniLM-L6-v2's WordPiece tokenizer
(the bert-base-uncased vocabulary, lower-cased, 30,522 pieces), shipped with assay
in ``data/minilm-wordpiece-tokenizer.json`` so budgets need no download and no model.
Special tokens are not counted and nothing is truncated. English prose runs about
4.3 characters per piece; an LLM's own tokenizer differs by a few per cent, so read
a budget as "about this much prompt", identical for every run compared.

Each document is tokenized once per corpus (``doc_tokens``: every piece with its
character span). A chunk costs the document pieces that overlap its span
(``chunk_tokens``), so a chunk boundary inside a word charges that word to both
chunks, as a prompt holding both chunks would. Overlapping chunks each cost their
full length: a prompt pays for repeated text.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from itertools import chain
from pathlib import Path

TOKENIZER_FILE = Path(__file__).parents[1] / "data" / "minilm-wordpiece-tokenizer.json"
TOKENIZER_NAME = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary, lower-cased)"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@lru_cache(maxsize=1)
def tokenizer():
    from tokenizers import Tokenizer

    from assay.core.errors import AssayError

    data = TOKENIZER_FILE.read_bytes()
    if hashlib.sha256(data).hexdigest() != TOKENIZER_SHA256:
        raise AssayError(f"{TOKENIZER_FILE} does not match its pinned SHA-256; reinstall assay")
    tok = Tokenizer.from_str(data.decode("utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def tokenizer_id() -> str:
    return TOKENIZER_SHA256


def token_spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    """For each text, every word piece as a [start, end) character span, in order: the tokenizer's own output,
    what ``piece_offsets`` computes faster."""
    encodings = tokenizer().encode_batch(texts, add_special_tokens=False)
    return [e.offsets for e in encodings]


def count_tokens(text: str) -> int:
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


# -- the word pieces of many texts, as numpy arrays ---------------------------------------------------------------
# The tokenizer (BertNormalizer, BertPreTokenizer, WordPiece) works on each run of characters between ASCII
# whitespace (space, tab, line feed, carriage return) alone: the normalizer maps characters one by one (cleaning,
# accents, lower case, spaces around CJK), the pre-tokenizer splits at whitespace and punctuation, and WordPiece
# splits each resulting word by itself. So a text's pieces are the pieces of its runs, each run tokenized alone and
# shifted to where it starts. Runs of printable ASCII are split further, into letters-and-digits words and single
# punctuation marks, and each distinct word is tokenized once, wherever it occurs (SciFact: 1.4 million words,
# 36,000 distinct). The pre-tokenizer splits there too (it isolates every ASCII punctuation mark), and each word
# still goes through the tokenizer itself. Runs holding any other character go to the tokenizer whole.
# tests/store/test_budget_tokens.py holds this to the tokenizer's own output on real, generated and arbitrary text.
_SPACE, _WORD, _PUNCT, _OTHER = 0, 1, 2, 3
BATCH_CHARS = 4_000_000  # characters tokenized at once: bounded memory on large corpora
PART_CHARS = 100_000  # characters in one text given to the tokenizer, which tokenizes several in parallel


def _as_other(error):
    """Codec error handler: each character latin-1 cannot hold becomes byte 0x80 (one of the 'other' class)."""
    return "\x80" * (error.end - error.start), error.end


@lru_cache(maxsize=1)
def _classes():
    """The class of each byte of a text encoded by ``_bytes`` (one byte a character), and a ``bytes.translate``
    table that keeps ASCII letters and digits (lower-cased, as the normalizer does) and makes every other byte a
    space."""
    import codecs

    import numpy as np

    codecs.register_error("assay-budget-other", _as_other)
    table = np.full(256, _OTHER, dtype=np.uint8)  # 128-255: every non-ASCII character
    for c in " \t\n\r":
        table[ord(c)] = _SPACE
    for code in range(0x21, 0x7F):
        table[code] = _WORD if chr(code).isalnum() else _PUNCT
    letters = bytes(code + 32 if 65 <= code <= 90 else code if table[code] == _WORD else 32 for code in range(256))
    return table, letters


def _bytes(text: str) -> bytes:
    """``text`` one byte a character: ASCII as itself, every other character 0x80 or above."""
    _classes()
    return text.encode("latin-1", "assay-budget-other")


class _Index(dict):
    """Word -> id; a word not seen before gets the next id and waits in ``new`` to be tokenized."""

    def __init__(self):
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, word: str) -> int:
        self[word] = key = len(self)
        self.new.append(word)
        return key


class _Words:
    """The pieces of each distinct word, tokenized once: offsets within the word, in growing numpy arrays. The
    ASCII punctuation marks come first, as ids 0-31 in code order (``punctuation`` maps a code to its id)."""

    def __init__(self):
        import numpy as np

        self.index = _Index()
        self.counts = self.first = self.starts = self.ends = np.zeros(0, dtype=np.int64)
        marks = [chr(c) for c in range(128) if _classes()[0][c] == _PUNCT]
        self.punctuation = np.zeros(128, dtype=np.int64)
        self.punctuation[[ord(m) for m in marks]] = self.keys(marks)

    def keys(self, words: list[str]):
        """Each word's id (ids in order of first sight), tokenizing the words not seen before."""
        import numpy as np

        index = self.index
        keys = np.fromiter(map(index.__getitem__, words), dtype=np.int64, count=len(words))  # one look-up a word
        if index.new:
            counts, starts, ends = _encoded(index.new)
            index.new = []
            self.first = np.concatenate((self.first, len(self.starts) + np.cumsum(counts) - counts))
            self.counts = np.concatenate((self.counts, counts))
            self.starts = np.concatenate((self.starts, starts))
            self.ends = np.concatenate((self.ends, ends))
        return keys


def _encoded(texts: list[str]):
    """The tokenizer's pieces of ``texts``, none of which holds ASCII whitespace: pieces per text, and each piece's
    start and end within its text. The texts are tokenized joined, a space between each two (the pieces of each
    run between whitespace are its own, as above), in parts of about ``PART_CHARS`` that the tokenizer's threads
    share: a few encoding objects instead of one per text (14 us each)."""
    import numpy as np

    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    at = np.cumsum(lengths + 1) - lengths - 1  # where each text starts in the joined text
    joined = " ".join(texts)
    bounds = np.unique(np.searchsorted(at, np.arange(0, len(joined), PART_CHARS)))  # texts that start a part
    bounds = bounds[bounds < len(texts)]
    part_at, part_end = at[bounds], np.append(at[bounds[1:]] - 1, len(joined))
    parts = [joined[s:e] for s, e in zip(part_at.tolist(), part_end.tolist())]
    offsets = [e.offsets for e in tokenizer().encode_batch(parts, add_special_tokens=False)]
    counts = np.fromiter(map(len, offsets), dtype=np.int64, count=len(offsets))
    flat = np.fromiter(chain.from_iterable(chain.from_iterable(offsets)), dtype=np.int64,
                       count=2 * int(counts.sum())).reshape(-1, 2) + np.repeat(part_at, counts)[:, None]
    text = np.searchsorted(at, flat[:, 0], side="right") - 1
    return np.bincount(text, minlength=len(texts)), flat[:, 0] - at[text], flat[:, 1] - at[text]


def _expand(counts, firsts):
    """Indices ``firsts[i] + j`` for j < counts[i], in order, and the i each one came from."""
    import numpy as np

    owner = np.repeat(np.arange(len(counts)), counts)
    within = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    return firsts[owner] + within, owner


def _batch_offsets(texts: list[str], words: _Words):
    import numpy as np

    table, letters = _classes()
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_start = np.cumsum(lengths + 1) - lengths - 1  # texts joined by one space each
    joined = " ".join(texts)
    data = _bytes(joined)
    code = np.frombuffer(data, dtype=np.uint8)
    cls = table[code]
    # runs (maximal stretches without ASCII whitespace) that hold another character, taken whole: the whitespace
    # before and after each such character bounds its run
    space = np.concatenate(([-1], np.flatnonzero(cls == _SPACE), [len(code)]))
    around = np.unique(np.searchsorted(space, np.flatnonzero(cls == _OTHER)))
    run_start, run_end = space[around - 1] + 1, space[around]
    # words of the other runs: letters and digits together (ASCII lower-cased, as the normalizer does, so 'The'
    # and 'the' are one entry), each punctuation mark alone
    is_word = cls == _WORD
    first = is_word.copy()
    first[1:] &= ~is_word[:-1]  # a word's first character
    is_punct = cls == _PUNCT
    start = np.flatnonzero(first | is_punct)  # where each word or mark starts, in order
    mark = is_punct[start]
    key = np.empty(len(start), dtype=np.int64)
    key[~mark] = words.keys(data.translate(letters).decode("ascii").split())  # one word a start, in order
    key[mark] = words.punctuation[code[start[mark]]]
    if len(run_start):  # leave out the words of runs taken whole
        run = np.searchsorted(run_start, start, side="right") - 1  # the last taken run starting at or before
        keep = (run < 0) | (start >= run_end[run])
        start, key = start[keep], key[keep]
    source, owner = _expand(words.counts[key], words.first[key])
    starts, ends = words.starts[source] + start[owner], words.ends[source] + start[owner]
    if len(run_start):
        counts, t_starts, t_ends = _encoded([joined[s:e] for s, e in zip(run_start.tolist(), run_end.tolist())])
        shift = np.repeat(run_start, counts)
        # runs do not overlap, so every piece of a whole run goes in before the first later word piece
        into = np.searchsorted(starts, shift)
        starts = np.insert(starts, into, t_starts + shift)
        ends = np.insert(ends, into, t_ends + shift)
    counts = np.diff(np.searchsorted(starts, text_start), append=len(starts))  # a text's pieces start in it
    shift = np.repeat(text_start, counts)
    return counts, starts - shift, ends - shift


def piece_batches(texts: list[str]):
    """The word pieces of ``texts``, exactly as ``token_spans`` gives them, as numpy arrays, a batch of texts at a
    time (``BATCH_CHARS``): yields (first text, pieces per text, each piece's start and end within its text),
    all int64, texts and pieces in order."""
    words, first, size = _Words(), 0, 0
    for i, text in enumerate(texts):
        size += len(text) + 1
        if size >= BATCH_CHARS:
            yield (first, *_batch_offsets(texts[first:i + 1], words))
            first, size = i + 1, 0
    if first < len(texts) or not texts:
        yield (first, *_batch_offsets(texts[first:], words))


def piece_offsets(texts: list[str]):
    """``piece_batches`` in one piece: pieces per text, and every piece's start and end within its text."""
    import numpy as np

    parts = [batch[1:] for batch in piece_batches(texts)]
    return tuple(np.concatenate(column) for column in zip(*parts))


def write_tokens(warehouse, corpus_hash: str, chunk_set: str) -> str:
    """Token tables for a stored corpus and chunk set (each computed once); returns the tokenizer id.

    Runs inside the caller's transaction; the corpus's documents and the chunk set's chunks must be stored. No
    index keeps the tables' rows unique (migration 015): a corpus's pieces, and a chunk set's counts, are written
    only when none are stored, and the transaction holds the warehouse's one read-write connection.
    """
    import numpy as np

    from assay.core.sqlfiles import load_sql

    tid, con = tokenizer_id(), warehouse.con
    if not con.execute("SELECT COUNT(*) FROM tokenizers WHERE tokenizer_id = ?", [tid]).fetchall()[0][0]:
        con.execute("INSERT INTO tokenizers VALUES (?, ?, CAST(current_timestamp AS TIMESTAMP))", [tid, TOKENIZER_NAME])
    if not con.execute(load_sql("budget/has_doc_tokens"), {"tokenizer_id": tid, "corpus_hash": corpus_hash}).fetchall():
        docs = con.execute("SELECT doc_id, text FROM documents WHERE corpus_hash = ? ORDER BY doc_id",
                           [corpus_hash]).fetchall()
        ids = np.array([doc_id for doc_id, _ in docs], dtype=object)
        for first, counts, starts, ends in piece_batches([text for _, text in docs]):
            piece_idx = np.arange(len(starts)) - np.repeat(np.cumsum(counts) - counts, counts)
            # the documents' own id strings, repeated by reference, as numpy columns: an Arrow dictionary column
            # reads faster (0.25 s on SciFact) but DuckDB imports pandas when it is first given an Arrow table,
            # and no command that does not need pandas may load it (tests/project/test_startup.py)
            table = {"doc_id": np.repeat(ids[first:first + len(counts)], counts),
                     "tok_idx": piece_idx.astype(np.int32), "start_char": starts.astype(np.int32),
                     "end_char": ends.astype(np.int32)}
            con.register("_assay_tokens", table)
            try:
                con.execute(load_sql("budget/doc_tokens"), {"tokenizer_id": tid, "corpus_hash": corpus_hash})
            finally:
                try:
                    con.unregister("_assay_tokens")
                except Exception:  # an aborted transaction refuses even this; the rollback drops the view
                    pass
    if not con.execute(load_sql("budget/has_chunk_tokens"), {"tokenizer_id": tid, "chunk_set": chunk_set}).fetchall():
        con.execute(load_sql("budget/chunk_tokens"), {"tokenizer_id": tid, "corpus_hash": corpus_hash,
                                                       "chunk_set": chunk_set})
    return tid


def backfill(warehouse) -> int:
    """Token tables for every stored run recorded before budgets existed; returns how many (corpus, chunk set)
    pairs were tokenized."""
    runs = warehouse.con.execute("SELECT DISTINCT corpus_hash, chunk_set FROM runs WHERE tokenizer_id IS NULL "
                                 "ORDER BY corpus_hash, chunk_set").fetchall()
    for corpus_hash, chunk_set in runs:
        write_tokens(warehouse, corpus_hash, chunk_set)
    if runs:
        warehouse.con.execute("UPDATE runs SET tokenizer_id = ? WHERE tokenizer_id IS NULL", [tokenizer_id()])
    return len(runs)
