"""A Python function as a retriever (``assay.evaluate(retriever=...)``)."""

from __future__ import annotations

from collections.abc import Mapping

from assay.core.errors import RetrieverError
from assay.retrieval import Hit
from assay.retrieval.results import _question, _unwrap, parse_results


class CallableRetriever:
    """A Python function ``fn(question, limit)`` returning results, or ``(id, score)`` pairs."""

    def __init__(self, fn, docs: Mapping[str, int], name: str | None = None):
        self.fn = fn
        self.docs = docs
        self.function = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
        self.name = name or getattr(fn, "__name__", None) or "callable"

    def config(self) -> dict:
        return {"name": self.name, "kind": "callable", "function": self.function}

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if limit <= 0:
            return []
        where = f"retriever {self.name!r} ({_question(query, query_id)})"
        try:
            raw = self.fn(query, limit)
        except Exception as exc:
            raise RetrieverError(f"{where}: {type(exc).__name__}: {exc}") from exc
        return parse_results(_unwrap(raw, where), self.docs, where)[:limit]

    def close(self) -> None:
        pass
