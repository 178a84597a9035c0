"""A stored TREC run file replayed as a retriever: of whole documents, or of spans named by assay's chunk ids."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path

from assay.core import progress
from assay.core.errors import RetrieverError
from assay.retrieval import Hit
from assay.retrieval.results import _excerpt, _parse_chunk_id, _span_chunk_id


class TrecRunRetriever:
    """A stored TREC run (``qid Q0 docno rank score tag``) replayed as a retriever.

    A docno is a document id of the corpus (the whole document is retrieved) or an assay chunk id,
    ``<doc_id>#<start>-<end>``: that span of the document, as `assay export --format trec` writes a
    chunk-level run, so an exported run is read back with the figures it was stored with.
    ``order`` "score": each query's items are ordered as trec_eval orders them, score descending,
    equal scores by docno descending, and the rank column is ignored, as trec_eval does (a note says
    how many queries the file ranks otherwise). "rank": by the rank column, the order
    the file states; a file assay exported lists its hits in the order assay stored, ties included,
    which trec_eval's order reverses within ties. Two docnos naming one span (a document and its
    whole-text chunk id) keep the first. A query the run does not contain retrieves nothing.
    """

    def __init__(self, path, docs: Mapping[str, int], name: str | None = None, order: str = "score"):
        self.path = Path(path)
        self.docs = docs
        self.name = name or self.path.stem
        self.order = order
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise RetrieverError(f"TREC run {self.path}: cannot read: {exc.strerror or exc}") from exc
        self.sha256 = hashlib.sha256(data).hexdigest()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RetrieverError(f"TREC run {self.path}: not UTF-8 (byte {exc.start})") from None
        self.tags: set[str] = set()
        runs: dict[str, dict[str, tuple[float, int, str]]] = {}
        spans: dict[str, tuple[str, str]] = {}  # docno -> (chunk id, document id), for docnos that are chunk ids
        lines = text.splitlines()
        with progress.task(f"reading {self.path.name}", total=len(lines), unit="lines") as shown:
            for number, line in enumerate(lines, start=1):
                if not number % 4096:
                    shown.update(completed=number)
                if not line.strip():
                    continue
                where = f"{self.path}:{number}"
                fields = line.split()
                if len(fields) != 6:
                    raise RetrieverError(f"{where}: expected 6 fields 'qid Q0 docno rank score tag', got {len(fields)}")
                qid, _, docno, rank, score_text, tag = fields
                try:
                    score = float(score_text)
                except ValueError:
                    score = math.nan
                if not math.isfinite(score):
                    raise RetrieverError(f"{where}: score {score_text!r} is not a finite number")
                if docno not in docs and docno not in spans:
                    spans[docno] = self._span(docno, where)
                ranking = runs.setdefault(qid, {})
                if docno in ranking:
                    raise RetrieverError(f"{where}: {docno!r} appears twice for query {qid} "
                                         f"(first at line {ranking[docno][1]})")
                if order == "rank" and not rank.isdigit():
                    raise RetrieverError(f"{where}: rank {rank!r} is not a whole number, which --run-order rank needs")
                ranking[docno] = (score, number, rank)
                self.tags.add(tag)
        whole = {d: (f"{d}#0-{length}", d) for d, length in docs.items()}
        self._runs = {}
        reordered = 0
        for qid, ranking in runs.items():
            by_score = [d for _, d in sorted(((s, d) for d, (s, _, _) in ranking.items()), reverse=True)]
            by_rank = None
            if all(r.isdigit() for _, _, r in ranking.values()):
                by_rank = sorted(by_score, key=lambda d: int(ranking[d][2]))  # stable: equal ranks by score
            reordered += by_rank is not None and by_rank != by_score
            hits, seen = [], set()
            for docno in by_rank if order == "rank" else by_score:
                chunk_id, doc_id = whole[docno] if docno in whole else spans[docno]
                if chunk_id not in seen:
                    seen.add(chunk_id)
                    hits.append(Hit(chunk_id, doc_id, ranking[docno][0]))
            self._runs[qid] = hits
        if reordered and order == "score":
            from assay.core.escape import terminal

            progress.say(f"note: {reordered} of {len(runs)} queries of {terminal(self.path.name)} rank their lines "
                         "otherwise than trec_eval's order (score, then docno descending), the order used here; "
                         "--run-order rank (run_order = \"rank\") keeps the file's ranks, as `assay export "
                         "--format trec` wrote them")

    def _span(self, docno: str, where: str) -> tuple[str, str]:
        """(chunk id, document id) of a docno that is no document id: it must be an assay chunk id."""
        parsed = _parse_chunk_id(docno)
        if parsed is None or parsed[0] not in self.docs:
            raise RetrieverError(f"{where}: unknown document id {docno!r}; the run must use the corpus's document "
                                 "ids, or assay's chunk ids '<doc_id>#<start>-<end>' (as `assay export --format trec` "
                                 "writes them)")
        return _span_chunk_id(parsed[0], parsed[1], parsed[2], self.docs, where), parsed[0]

    def query_ids(self) -> list[str]:
        return sorted(self._runs)

    def config(self) -> dict:
        return {"name": self.name, "kind": "trec_run", "path": str(self.path), "sha256": self.sha256,
                "tags": sorted(self.tags)}

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if query_id is None:
            raise RetrieverError(f"TREC run {self.path}: needs the query id of question {_excerpt(query, 80)!r}")
        return self._runs.get(str(query_id), [])[:max(limit, 0)]

    def close(self) -> None:
        pass
