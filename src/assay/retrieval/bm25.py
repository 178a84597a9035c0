"""BM25 over chunks through tantivy (k1=1.2, b=0.75, tantivy's fixed parameters).

The analyzer is tantivy's simple tokenizer (split on non-alphanumerics), then
optionally lower-casing, English stop-word removal and English (Snowball)
stemming; each switch is part of the run configuration. The question runs
through the same analyzer and becomes a disjunction of its terms, so a question
none of whose terms occur in the corpus returns nothing: that is abstention.
The index is built per run in a temporary directory (``assay-bm25-<owner>-...`` in the system's temporary
directory, named for its process: assay.core.scratch) and removed afterwards, also when building it fails (a full
disk) or the run is stopped by SIGINT or SIGTERM; one a killed process left behind is removed by the next index
built there.

Chunks are indexed in chunk-id order, each with its position in that order (its
``rank``) as a fast field: a search reads one column for its hits instead of a
stored document per hit, and the rank names the chunk. tantivy breaks equal
scores by document address, which in an index of one segment is rank order, so
its top hits are already ranked as every stage ranks (score desc, chunk_id asc);
an index of several segments fetches past the cut-off while scores tie there and
sorts. A search returns those ranks and scores as they come (a ``Ranking``): no
``Hit`` is made unless one is read, and the run stores the columns.

tantivy-py 0.27 gives no faster way to the same hits: ``Searcher.search`` returns
a list of (score, address) pairs, ``order_by_field`` orders by a fast field instead
of the score, and ``aggregate`` computes aggregations, not a top-k by score. Its
BM25 parameters are constants in tantivy (``K1 = 1.2``, ``B = 0.75`` in
``src/query/bm25.rs``; its ARCHITECTURE.md: "The relevance score implemented in
tantivy is not configurable"), and tantivy-py has no setting for them:
``Query.explain`` on 0.27 reports k1 1.2 and b 0.75.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assay.core import progress, scratch
from assay.core.errors import AssayError
from assay.retrieval.ranking import ChunkTable, Ranking

TOKENIZER_NAME = "assay_en"
SCRATCH = "assay-bm25-"  # the temporary index directories' prefix


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


def _fast_fields(tantivy) -> bool:
    """Whether this tantivy-py reads a fast field for many hits at once (0.26 on); before, a hit's stored rank."""
    return hasattr(tantivy.Searcher, "fast_field_values")


class BM25Index:
    """A tantivy index over chunks, in a temporary directory that ``close`` removes."""

    def __init__(self, chunks, options: AnalyzerOptions = AnalyzerOptions()):
        import tantivy

        self.options = options
        self.analyzer = build_analyzer(options)
        chunks = list(chunks)
        ids = [c.chunk_id for c in chunks]
        order = sorted(range(len(chunks)), key=ids.__getitem__)
        self.table = ChunkTable([ids[i] for i in order], [chunks[i].doc_id for i in order])  # by rank
        self._size = max(len(chunks), 1)  # tantivy allocates 16 bytes per hit asked for, found or not
        self._fast = _fast_fields(tantivy)
        collect_stale()
        self._dir = tempfile.mkdtemp(prefix=scratch.name(SCRATCH))
        try:
            self._build(tantivy, chunks, order)
        except BaseException as exc:  # a full disk, an interrupt: the directory goes with the index that failed
            self.close()
            why = _io_failure(exc)
            if why is not None:
                raise AssayError(f"cannot build the BM25 index in {Path(self._dir).parent}: {why}; its directory "
                                 "is removed, nothing was written: free space there, or set TMPDIR to a directory "
                                 "with room, and run again") from None
            raise

    def _build(self, tantivy, chunks, order) -> None:
        schema_builder = tantivy.SchemaBuilder()
        schema_builder.add_integer_field("rank", stored=not self._fast, fast=self._fast)
        schema_builder.add_text_field("body", stored=False, tokenizer_name=TOKENIZER_NAME, index_option="freq")
        self._schema = schema_builder.build()
        self._index = tantivy.Index(self._schema, path=self._dir)
        self._index.register_tokenizer(TOKENIZER_NAME, self.analyzer)
        writer = self._index.writer(heap_size=128_000_000, num_threads=1)
        with progress.task("indexing chunks (bm25)", total=len(chunks), unit="chunks") as shown:
            for rank, i in enumerate(order):
                writer.add_document(tantivy.Document(rank=rank, body=chunks[i].text))
                shown.advance()
            writer.commit()
            writer.wait_merging_threads()
        self._index.reload()
        self._searcher = self._index.searcher()
        self._one_segment = self._searcher.num_segments == 1
        self._term_query, self._boolean_query = tantivy.Query.term_query, tantivy.Query.boolean_query
        self._should = tantivy.Occur.Should

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def config(self) -> dict:
        return {"name": "bm25", "engine": "tantivy", "k1": 1.2, "b": 0.75, "analyzer": self.options.config()}

    def _query(self, text: str):
        terms = self.analyzer.analyze(text)
        if not terms:
            return None
        schema, term_query, should = self._schema, self._term_query, self._should
        return self._boolean_query([(should, term_query(schema, "body", t)) for t in terms])

    def _ranks(self, addresses) -> list[int]:
        if self._fast:
            return self._searcher.fast_field_values("rank", addresses)
        return [self._searcher.doc(a)["rank"][0] for a in addresses]

    def search(self, text: str, limit: int) -> Ranking:
        """The top ``limit`` chunks, ties ordered by chunk id (also across the cut-off), as columns: each hit's
        rank (its position in ``table``) and score. No ``Hit`` is made until one is read."""
        query = self._query(text)
        if query is None or limit <= 0:
            return Ranking(self.table, [], [])
        if self._one_segment:
            # tantivy breaks equal scores by ascending document address, which in one segment is rank order:
            # its top ``limit`` are ours, in our order
            found = self._searcher.search(query, limit=min(limit, self._size), count=False).hits
            if not found:
                return Ranking(self.table, [], [])
            scores, addresses = zip(*found)
            return Ranking(self.table, self._ranks(addresses), list(scores))
        fetch = limit
        while True:
            found = self._searcher.search(query, limit=min(fetch + 1, self._size), count=False).hits
            # Fetch further while the score at the cut-off is shared by documents beyond it.
            if len(found) <= fetch or found[fetch][0] < found[limit - 1][0]:
                break
            fetch *= 2
        if not found:
            return Ranking(self.table, [], [])
        ranked = sorted(zip([-score for score, _ in found], self._ranks([address for _, address in found])))[:limit]
        return Ranking(self.table, [r for _, r in ranked], [-score for score, _ in ranked])


def collect_stale(parent=None) -> list[Path]:
    """Remove the index directories (in ``parent``, default the temporary directory) whose process is gone: one
    SIGKILL, SIGABRT or a crash left behind. Returns what was removed."""
    removed = []
    for path, _ in scratch.stale(Path(parent or tempfile.gettempdir()), SCRATCH):
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _io_failure(exc: BaseException) -> str | None:
    """What the file system refused, when ``exc`` is such a failure (tantivy reports one as a ValueError whose text
    holds the OS error: ``Os { code: 28, kind: StorageFull, ... }``); None for any other failure."""
    import os
    import re

    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    if isinstance(exc, ValueError):
        code = re.search(r"Os \{ code: (\d+)", str(exc))
        if code:
            return os.strerror(int(code.group(1)))
    return None
