"""BM25 over chunks through tantivy (k1=1.2, b=0.75, tantivy's fixed parameters).

The analyzer is tantivy's simple tokenizer (split on non-alphanumerics), then
optionally lower-casing, English stop-word removal and English (Snowball)
stemming; each switch is part of the run configuration. The question runs
through the same analyzer and becomes a disjunction of its terms, so a question
none of whose terms occur in the corpus returns nothing: that is abstention.
The index is built per run in a temporary directory and removed afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass

from assay import progress
from assay.retrieval import Hit, rank_hits

TOKENIZER_NAME = "assay_en"


@dataclass(frozen=True)
class AnalyzerOptions:
    lowercase: bool = True
    stopwords: bool = True
    stemming: bool = True

    def config(self) -> dict:
        return {"tokenizer": "simple", "lowercase": self.lowercase, "stopwords": self.stopwords,
                "stemming": self.stemming, "remove_long": 40}


def build_analyzer(options: AnalyzerOptions):
    import tantivy

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    if options.lowercase:
        builder = builder.filter(tantivy.Filter.lowercase())
    if options.stopwords:
        builder = builder.filter(tantivy.Filter.stopword("english"))
    if options.stemming:
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


class BM25Index:
    """A tantivy index over chunks, in a temporary directory that ``close`` removes."""

    def __init__(self, chunks, options: AnalyzerOptions = AnalyzerOptions()):
        import tantivy

        self.options = options
        self.analyzer = build_analyzer(options)
        self._dir = tempfile.mkdtemp(prefix="assay-bm25-")
        schema_builder = tantivy.SchemaBuilder()
        schema_builder.add_integer_field("ord", stored=True)
        schema_builder.add_text_field("body", stored=False, tokenizer_name=TOKENIZER_NAME, index_option="freq")
        self._schema = schema_builder.build()
        self._index = tantivy.Index(self._schema, path=self._dir)
        self._index.register_tokenizer(TOKENIZER_NAME, self.analyzer)
        self._chunks = list(chunks)
        writer = self._index.writer(heap_size=128_000_000, num_threads=1)
        with progress.task("indexing chunks (bm25)", total=len(self._chunks), unit="chunks") as shown:
            for i, chunk in enumerate(self._chunks):
                writer.add_document(tantivy.Document(ord=i, body=chunk.text))
                shown.advance()
            writer.commit()
            writer.wait_merging_threads()
        self._index.reload()
        self._searcher = self._index.searcher()

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def config(self) -> dict:
        return {"name": "bm25", "engine": "tantivy", "k1": 1.2, "b": 0.75, "analyzer": self.options.config()}

    def _query(self, text: str):
        import tantivy

        terms = self.analyzer.analyze(text)
        if not terms:
            return None
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "body", t)) for t in terms]
        )

    def search(self, text: str, limit: int) -> list[Hit]:
        """The top ``limit`` chunks, ties ordered by chunk id (also across the cut-off)."""
        query = self._query(text)
        if query is None or limit <= 0:
            return []
        fetch = limit
        while True:
            result = self._searcher.search(query, limit=fetch + 1, count=False)
            scored = [(score, self._searcher.doc(addr)["ord"][0]) for score, addr in result.hits]
            # Fetch further while the score at the cut-off is shared by documents beyond it.
            if len(scored) <= fetch or scored[fetch][0] < scored[limit - 1][0]:
                break
            fetch *= 2
        hits = rank_hits([
            Hit(self._chunks[o].chunk_id, self._chunks[o].doc_id, float(s)) for s, o in scored
        ])
        return hits[:limit]
