"""BM25 through tantivy: hits, scores and the tie order against a plain tantivy index read the slow way, both as the
columns a search returns (a Ranking: positions in the index's chunk table, scores) and as the hits they read as."""

from __future__ import annotations

import random

import pytest

from assay.inputs.chunking import Chunk
from assay.retrieval import Hit
from assay.retrieval import bm25
from assay.retrieval.bm25 import AnalyzerOptions, BM25Index
from assay.retrieval.ranking import Ranking

WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def corpus(seed: int, n: int = 60) -> list[Chunk]:
    """Short texts over six words, so many scores tie; document ids whose string order is not the input order."""
    rng = random.Random(seed)
    chunks = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        doc = f"d{rng.randint(0, 10 ** 6)}-{i}"
        start = rng.choice([0, 7, 100])
        chunks.append(Chunk(doc, 0, start, start + len(text), text))
    return chunks


def reference(chunks: list[Chunk], question: str, limit: int) -> list[Hit]:
    """Every match from an index that stores the chunk id, sorted by score desc then chunk id asc, cut."""
    import tantivy

    analyzer = bm25.build_analyzer(AnalyzerOptions())
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, tokenizer_name="ref", index_option="freq")
    schema = builder.build()
    index = tantivy.Index(schema)
    index.register_tokenizer("ref", analyzer)
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for c in chunks:
        writer.add_document(tantivy.Document(id=c.chunk_id, body=c.text))
    writer.commit()
    index.reload()
    searcher = index.searcher()
    terms = analyzer.analyze(question)
    if not terms:
        return []
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in terms])
    doc_of = {c.chunk_id: c.doc_id for c in chunks}
    found = [(score, searcher.doc(address)["id"][0]) for score, address in
             searcher.search(query, limit=len(chunks), count=False).hits]
    return [Hit(cid, doc_of[cid], score) for score, cid in sorted(found, key=lambda x: (-x[0], x[1]))][:limit]


QUESTIONS = ["apple", "pear plum", "fig fig kiwi", "lime apple pear plum fig kiwi", "banana", "the", ""]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("path", ["one segment", "general"])
def test_hits_match_a_plain_index_sorted_by_score_then_chunk_id(seed, path):
    chunks = corpus(seed)
    with BM25Index(chunks) as index:
        assert index._one_segment
        if path == "general":  # the path an index of several segments takes: fetch past the cut-off, sort
            index._one_segment = False
        for question in QUESTIONS:
            for limit in (1, 3, 10, 25, 200):
                expected = reference(chunks, question, limit)
                found = index.search(question, limit)
                assert isinstance(found, Ranking) and found.table is index.table
                assert columns(found) == ([h.chunk_id for h in expected], [h.doc_id for h in expected],
                                          [h.score for h in expected]), (question, limit)
                assert found == expected and list(found) == expected, (question, limit)


def columns(ranking: Ranking) -> tuple[list, list, list]:
    """What a ranking's columns name, read without making a Hit."""
    table = ranking.table
    return ([table.chunk_ids[p] for p in ranking.positions], [table.doc_ids[p] for p in ranking.positions],
            list(ranking.scores))


def test_ties_across_the_cut_off_go_by_chunk_id():
    texts = ["kiwi"] * 5 + ["kiwi kiwi"]
    chunks = [Chunk(f"doc{9 - i}", 0, 0, len(t), t) for i, t in enumerate(texts)]  # ids descend in input order
    with BM25Index(chunks) as index:
        hits = index.search("kiwi", 3)
        index._one_segment = False
        assert index.search("kiwi", 3) == hits  # fetched past the cut-off while tied there, sorted, cut
    assert [h.chunk_id for h in hits] == ["doc4#0-9", "doc5#0-4", "doc6#0-4"]  # then doc7..doc9, as tied
    assert hits.positions == [0, 1, 2]  # the table is in chunk-id order: doc4 first
    assert hits[0].score > hits[1].score == hits[2].score == index_score(chunks, "kiwi", "doc9#0-4")
    assert isinstance(hits[0].score, float)


def index_score(chunks, question, chunk_id):
    return next(h.score for h in reference(chunks, question, len(chunks)) if h.chunk_id == chunk_id)


def test_without_fast_field_reading_the_stored_rank_gives_the_same_hits(monkeypatch):
    chunks = corpus(7)
    with BM25Index(chunks) as fast:
        expected = {q: fast.search(q, 10) for q in QUESTIONS}
    monkeypatch.setattr(bm25, "_fast_fields", lambda tantivy: False)  # tantivy-py before 0.26
    with BM25Index(chunks) as slow:
        assert not slow._fast
        assert {q: slow.search(q, 10) for q in QUESTIONS} == expected


def test_a_question_without_terms_or_a_limit_of_zero_finds_nothing():
    with BM25Index(corpus(1)) as index:
        for question, limit in (("the and of", 10), ("", 10), ("kiwi", 0), ("banana", 10)):  # stop words only:
            found = index.search(question, limit)                                         # abstention
            assert isinstance(found, Ranking) and len(found) == 0 and found == [] and list(found) == []
            assert (found.positions, found.scores, found.doc_ids()) == ([], [], [])


def test_configuration_is_what_old_runs_stored():
    with BM25Index(corpus(2)) as index:
        assert index.config() == {"name": "bm25", "engine": "tantivy", "k1": 1.2, "b": 0.75, "analyzer": {
            "tokenizer": "simple", "lowercase": True, "stopwords": True, "stemming": True, "remove_long": 40}}


class _SegmentedIndex:
    """tantivy.Index whose writer commits every ``every`` documents: an index of several segments, as a large
    corpus (or a heap too small for it) gives, so the general path reads real addresses across segments."""

    def __init__(self, real, every: int):
        self._real, self._every = real, every

    def __call__(self, *args, **kwargs):
        index, every = self._real(*args, **kwargs), self._every

        class Writer:
            def __init__(self, writer):
                self._writer, self._n = writer, 0

            def add_document(self, doc):
                self._writer.add_document(doc)
                self._n += 1
                if self._n % every == 0:
                    self._writer.commit()

            def __getattr__(self, name):
                return getattr(self._writer, name)

        class Index:
            def writer(self, *a, **k):
                return Writer(index.writer(*a, **k))

            def __getattr__(self, name):
                return getattr(index, name)

        return Index()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("seed", range(3))
def test_an_index_of_several_segments_gives_the_same_hits(seed, monkeypatch):
    import tantivy

    chunks = corpus(seed)
    monkeypatch.setattr(tantivy, "Index", _SegmentedIndex(tantivy.Index, every=9))
    with BM25Index(chunks) as index:
        assert index._searcher.num_segments > 1 and not index._one_segment
        for question in QUESTIONS:
            for limit in (1, 3, 10, 25, 200):
                expected = reference(chunks, question, limit)
                found = index.search(question, limit)
                assert isinstance(found, Ranking) and found == expected, (question, limit)


def test_the_largest_limit_is_searched_as_the_index_size_and_never_aborts():
    """tantivy allocates 16 bytes for every hit asked for: a limit of 2**31 - 1 asked for 34 GB and aborted the
    process with a Rust backtrace. The search asks for no more than the index holds; a real process, since an
    abort would take pytest with it."""
    import json
    import os
    import subprocess
    import sys

    script = (
        "import json\n"
        "from assay.inputs.chunking import Chunk\n"
        "from assay.retrieval.bm25 import BM25Index\n"
        "chunks = [Chunk(f'd{i}', 0, 0, 9, 'apple pear' if i % 3 else 'plum') for i in range(50)]\n"
        "out = {}\n"
        "with BM25Index(chunks) as index:\n"
        "    for one in (True, False):\n"
        "        index._one_segment = one\n"
        "        out[str(one)] = [h.chunk_id for h in index.search('apple', 2**31 - 1)]\n"
        "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["True"] == found["False"] and len(found["True"]) == 33
