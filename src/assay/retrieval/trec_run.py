"""A stored TREC run file replayed as a retriever of whole documents."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path

from assay import progress
from assay.errors import RetrieverError
from assay.retrieval import Hit
from assay.retrieval.results import _excerpt


class TrecRunRetriever:
    """A stored TREC run (``qid Q0 docno rank score tag``) replayed as a retriever of whole documents.

    Each query's documents are ordered as trec_eval orders them: score descending,
    equal scores by docno descending; the rank column is ignored, as trec_eval does.
    A query the run does not contain retrieves nothing.
    """

    def __init__(self, path, docs: Mapping[str, int], name: str | None = None):
        self.path = Path(path)
        self.docs = docs
        self.name = name or self.path.stem
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
        runs: dict[str, dict[str, tuple[float, int]]] = {}
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
                qid, _, docno, _, score_text, tag = fields
                try:
                    score = float(score_text)
                except ValueError:
                    score = math.nan
                if not math.isfinite(score):
                    raise RetrieverError(f"{where}: score {score_text!r} is not a finite number")
                if docno not in docs:
                    raise RetrieverError(f"{where}: unknown document id {docno!r}; the run must use the corpus's ids")
                ranking = runs.setdefault(qid, {})
                if docno in ranking:
                    raise RetrieverError(f"{where}: {docno!r} appears twice for query {qid} "
                                         f"(first at line {ranking[docno][1]})")
                ranking[docno] = (score, number)
                self.tags.add(tag)
        self._runs = {
            qid: [Hit(f"{d}#0-{docs[d]}", d, s) for s, d in
                  sorted(((s, d) for d, (s, _) in ranking.items()), reverse=True)]
            for qid, ranking in runs.items()
        }

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
