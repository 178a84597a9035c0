"""The stages of a run, one object each: retrieve, fuse, rerank, cut, answer.

A stage owns its configuration (``config()``, stored in the run's configuration), what it needs to
run, and ``run(question, lists)``: the list it produces for one question from the lists of the stages
before it. The runner times each call and turns every list into hit rows; the answer stage keeps its
own rows (answers, claims, citations, replies, contexts, model requests, judge verdicts).
"""

from __future__ import annotations

import time


def deepen(search, query: str, depth: int, doc_depth: int):
    """Top ``depth`` chunks, deepened until ``doc_depth`` distinct documents exist (or the matches run out)."""
    from assay.retrieval.ranking import doc_ids

    limit = depth
    while True:
        hits = search(query, limit)
        if len(hits) < limit or len(set(doc_ids(hits))) >= doc_depth:
            return hits
        limit *= 2


class Retrieve:
    """A first-stage list (``bm25``, ``dense``, ``external``): the index's top ``depth`` chunks; assay's own
    indexes deepen until ``doc_depth`` distinct documents exist."""

    def __init__(self, name: str, index, depth: int, doc_depth: int | None):
        self.name, self.index, self.depth, self.doc_depth = name, index, depth, doc_depth

    def config(self) -> dict:
        return self.index.config()

    def prepare(self, queries: list[str]) -> float:
        """Work done once for all questions (the dense stage embeds them in one batch); ms per question."""
        if self.name != "dense":
            return 0.0
        t0 = time.perf_counter()
        self.index.prepare(queries)
        return (time.perf_counter() - t0) * 1000.0 / max(1, len(queries))

    def run(self, question, lists: dict) -> list:
        if self.doc_depth is None:  # an external retriever returns what it returns
            return self.index.search(question.query, self.depth, query_id=question.query_id)
        return deepen(self.index.search, question.query, self.depth, self.doc_depth)

    def close(self) -> None:
        if hasattr(self.index, "close"):
            self.index.close()


class Fuse:
    """Two first-stage lists fused (reciprocal rank or weighted sum), cut at ``depth``."""

    name = "fusion"

    def __init__(self, inputs: list[str], settings: dict):
        self.inputs, self.settings = inputs, settings

    def config(self) -> dict:
        s = self.settings
        if s["fusion"] == "rrf":
            return {"method": "rrf", "k": s["rrf_k"]}
        return {"method": "weighted", "weights": s["weights"] or {"bm25": 0.5, "dense": 0.5}}

    def run(self, question, lists: dict) -> list:
        from assay.retrieval.fusion import fuse

        return fuse(self.settings["fusion"], {n: lists[n] for n in self.inputs}, self.settings)[: self.settings["depth"]]


class Rerank:
    """The cross-encoder over the top ``top_n`` of the list before it."""

    name = "rerank"

    def __init__(self, source: str, reranker, texts, top_n: int):
        self.source, self.reranker, self.texts, self.top_n = source, reranker, texts, top_n

    def config(self) -> dict:
        return {"top_n": self.top_n, **self.reranker.identity()}

    def run(self, question, lists: dict) -> list:
        from assay.retrieval.rerank.cross_encoder import rerank_hits

        return rerank_hits(self.reranker, question.query, lists[self.source], self.texts, self.top_n)


class Cut:
    """``final``: the last list cut at ``final_k``, emptied when a calibration says abstain. The list before
    the calibration's verdict is kept as ``_precal`` (the answer stage may be forced to use it)."""

    name = "final"

    def __init__(self, source: str, final_k: int | None, calibration: dict | None):
        self.source, self.final_k, self.calibration = source, final_k, calibration

    def run(self, question, lists: dict) -> list:
        current = lists[self.source]
        final = current[: self.final_k] if self.final_k else current
        lists["_precal"] = final
        if self.calibration is not None:
            from assay.retrieval.calibration import platt_predict

            top = final[0].score if final else None
            if float(platt_predict(self.calibration["a"], self.calibration["b"], [top])[0]) < self.calibration["threshold"]:
                return []
        return final


ANSWER_TABLES = ("answers", "claims", "citations", "answer_raw", "answer_context", "model_requests", "claim_judgments")


class Answer:
    """The answer stage: each question's final list to the generator, its reply checked against the citation
    contract, each kept claim to the judge when there is one. Owns every answer row of the run."""

    name = "answer"

    def __init__(self, generator, client, judge, settings: dict, texts, calibration):
        self.generator, self.client, self.judge = generator, client, judge
        self.s, self.texts, self.calibration = settings, texts, calibration
        self.rows = {table: [] for table in ANSWER_TABLES}

    def config(self) -> dict:
        return {**self.generator.config(), "context_k": self.s["context_k"],
                "force_generation": bool(self.s["force_generation"]),
                "judge": self.judge.config() if self.judge else
                "none: citation precision and faithfulness are rule-based"}

    def run(self, question, lists: dict) -> bool:
        """Answer one question; False when the endpoint blocked the run (HTTP 429 three times in a row)."""
        from assay.retrieval.answer.stage import answer_question
        from assay.core.errors import RunBlocked

        hits, refusal = lists["final"], None
        if not hits:
            if self.calibration is not None and lists["_precal"]:
                refusal = "calibration"
                if self.s["force_generation"]:  # diagnostic: answer anyway, and the run is not a gate run
                    hits, refusal = lists["_precal"], None
            else:
                refusal = "no_results"
        first_request = len(self.client.log) if self.client is not None else 0
        try:
            rows = answer_question(self.generator, question.query_id, question.query, hits, self.texts,
                                   self.s["context_k"], self.s["max_quote"], refusal)
        except RunBlocked:
            self._log_requests(first_request, question.query_id)
            return False
        self._log_requests(first_request, question.query_id)
        out = self.rows
        if self.client is not None:  # a model's replies, not the extractive generator's own payloads
            rows = self._bounded(rows)
        out["answers"].append(rows.answer)
        out["claims"] += rows.claims
        out["citations"] += rows.citations
        out["answer_raw"] += rows.raws
        out["answer_context"] += rows.context
        if self.judge is not None:
            self._judge_claims(question.query_id)
        return True

    def _bounded(self, rows):
        """The rows with what a model said kept to max_reply_chars characters per reply (none at 0), and errors
        to ERROR_CHARS: no transform of a key an endpoint might echo can be caught by redaction, so the
        less of a reply is kept, the less there is to leak."""
        from dataclasses import replace

        from assay.retrieval.answer.stage import ANSWER_COLUMNS, kept_error, kept_reply

        keep = self.s["max_reply_chars"]
        answer = list(rows.answer)
        at_excerpt, at_error = ANSWER_COLUMNS.index("response_excerpt"), ANSWER_COLUMNS.index("error")
        if answer[at_excerpt] is not None:
            answer[at_excerpt] = answer[at_excerpt][:keep] or None
        answer[at_error] = kept_error(answer[at_error])
        raws = [(q, i, mode, kept_reply(raw, keep)) for q, i, mode, raw in rows.raws] if keep else []
        return replace(rows, answer=tuple(answer), raws=raws)

    def stats(self) -> dict:
        return {"generator": self.generator.name, **(self.client.stats() if self.client is not None else {})}

    def _judge_claims(self, query_id: str) -> None:
        """The judge's verdict on each kept claim of one question (its citations are the evidence)."""
        from assay.retrieval.answer.stage import kept_error, kept_reply

        out = self.rows
        kept = [(idx, text) for q, idx, text, k, _ in out["claims"] if q == query_id and k]
        for idx, text in kept:
            quotes = [c[4] for c in out["citations"] if c[0] == query_id and c[1] == idx]
            verdict, raw, error = self.judge.judge(text, quotes)
            out["claim_judgments"].append((query_id, idx, self.judge.client.model, verdict,
                                           kept_reply(raw, self.s["max_reply_chars"]), kept_error(error)))

    def _log_requests(self, first: int, query_id: str) -> None:
        if self.client is None:
            return
        out = self.rows["model_requests"]
        for entry in self.client.log[first:]:
            out.append((len(out) + 1, query_id, entry.get("started_at"), entry.get("latency_ms"), entry.get("status"),
                        entry.get("error"), entry.get("rate_limited"), entry.get("retry"), entry.get("waited_s")))


def generator_for(s: dict):
    """(generator, model client or None) for the settings; (None, None) without an answer stage."""
    if s["generator"] is None:
        return None, None
    from assay.retrieval.answer.generate import ExtractiveAdapter, OpenAIGenerator

    if s["generator"] == "extractive":
        return ExtractiveAdapter(s["max_quote"]), None
    from assay.retrieval.answer.client import EXCERPT_CHARS, ChatClient

    client = ChatClient(s["generator_base_url"], s["generator_model"], api_key_env=s["generator_api_key_env"],
                        timeout_s=s["generator_timeout_s"], min_interval_s=s["min_interval_s"],
                        backoff_s=tuple(s["generator_backoff_s"]), max_retry_wait_s=s["max_retry_wait_s"],
                        excerpt_chars=min(EXCERPT_CHARS, s["max_reply_chars"]))
    return OpenAIGenerator(client, s["max_quote"]), client


def judge_for(s: dict):
    if not s["judge_model"]:
        return None
    from assay.retrieval.answer.client import EXCERPT_CHARS, ChatClient
    from assay.retrieval.answer.judge import Judge

    return Judge(ChatClient(s["judge_base_url"], s["judge_model"], api_key_env=s["judge_api_key_env"],
                            timeout_s=s["judge_timeout_s"], backoff_s=tuple(s["generator_backoff_s"]),
                            max_retry_wait_s=s["max_retry_wait_s"],
                            excerpt_chars=min(EXCERPT_CHARS, s["max_reply_chars"])))
