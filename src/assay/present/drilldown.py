"""One question of a run end to end, and every question of a run in one row each: what `assay show` and the
HTML report's question table and drill-down read. Every gold entry and hit names its pages in a paged
document (PDF): ``page`` (where it starts) and ``pages`` (every page it lies on); None and [] elsewhere.

A hit's text is its chunk's text, which is always the span ``[start_char, end_char)`` of its document's text:
a whole-document result is the chunk ``<doc_id>#0-<length>`` and an external retriever's span is a chunk of
the run's chunk set (``runner._external_chunks``), so ``marks`` (each gold span's overlap with the hit, as
offsets into ``text``) mean the same for every kind of run. All SQL is in ``sql/drilldown/``.
"""

from __future__ import annotations

import difflib
import json

from assay.core.errors import ConfigError, QueryNotFound, RunNotFound

DEFAULT_DEPTH = 10


def _rows(source, name: str, **params) -> list[dict]:
    cols, rows = source.query(f"drilldown/{name}", **params)
    return [dict(zip(cols, row)) for row in rows]


def _nearest(wanted: str, known: list[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(wanted, known, n=n, cutoff=0.4)


def _did_you_mean(wanted: str, known: list[str]) -> str:
    near = _nearest(wanted, known)
    return f"; did you mean {', '.join(near)}?" if near else ""


def resolve_run(source, run_ref: str | None) -> str:
    """The run id ``run_ref`` names (assay.store.run_refs: latest, latest~N, an id, a name, a unique part of an id), else
    RunNotFound naming the nearest ids."""
    from assay.store.run_refs import steps_back

    try:
        return source.resolve_run_id(run_ref)
    except RunNotFound as exc:
        if steps_back(run_ref) is not None:
            raise
        if not str(exc).startswith("no run") or "several" in str(exc):
            raise  # a run that did not complete, or a prefix of several: the message says what to do
        known = [r for r, in source.con.execute("SELECT run_id FROM complete_runs ORDER BY run_id").fetchall()]
        raise RunNotFound(f"no run {run_ref!r} in {source.path}{_did_you_mean(run_ref, known)} "
                          "(`assay runs` lists them)") from None


def _check_run(source, run_id: str) -> None:
    found = source.con.execute("SELECT 1 FROM complete_runs WHERE run_id = ?", [run_id]).fetchall()
    if not found:
        resolve_run(source, run_id)  # raises with the reason and the nearest ids
        raise RunNotFound(f"no complete run {run_id!r}; `assay runs` lists them")


def question_rows(source, run_id: str) -> list[dict]:
    """One dict per question of run ``run_id``, in query_id order (keys: see sql/drilldown/questions.sql)."""
    _check_run(source, run_id)
    rows = _rows(source, "questions", run_id=run_id)
    answered = source.con.execute("SELECT COUNT(*) FROM answers WHERE run_id = ?", [run_id]).fetchall()[0][0]
    answers = {r["query_id"]: r for r in _rows(source, "question_answers", run_id=run_id)} if answered else {}
    for row in rows:
        row["answerable"] = bool(row["answerable"])
        answer = answers.get(row["query_id"], {})
        row["answer_status"], row["answer_lost_at"] = answer.get("answer_status"), answer.get("answer_lost_at")
    return rows


def question_detail(source, run_id: str, query_id: str, depth: int = DEFAULT_DEPTH) -> dict:
    """Question ``query_id`` of run ``run_id``: its labels, gold spans, where it was lost, each stage's top
    ``depth`` hits (plus the stage's first relevant hit when it ranks lower, flagged ``beyond_depth``) with
    their text and gold marks, and its answer when the run had an answer stage."""
    _check_run(source, run_id)
    found = _details(source, run_id, query_id, depth)
    if not found:
        known = [r["query_id"] for r in _rows(source, "query_ids", run_id=run_id)]
        raise QueryNotFound(f"run {run_id} has no question {query_id!r}{_did_you_mean(query_id, known)} "
                            f"(`assay show {run_id}` lists its {len(known)} questions)")
    return found[query_id]


def question_details(source, run_id: str, depth: int = DEFAULT_DEPTH) -> dict[str, dict]:
    """``question_detail`` of every question of run ``run_id`` (query id -> dict, in query_id order), each
    SQL file run once for the whole run: what a report that drills into every question reads."""
    _check_run(source, run_id)
    return _details(source, run_id, None, depth)


def _pages(row: dict) -> dict:
    """``page`` (the first page a span lies on; None in a document without pages) and ``pages`` (every page
    it lies on, in order; [] without pages), from a row's first_page and last_page."""
    first, last = row.pop("first_page", None), row.pop("last_page", None)
    return {"page": first, "pages": [] if first is None else list(range(first, last + 1))}


def _paged(row: dict) -> dict:
    pages = _pages(row)
    return {**row, **pages}


def _by_query(rows: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row.pop("query_id"), []).append(row)
    return grouped


def _details(source, run_id: str, query_id: str | None, depth: int) -> dict[str, dict]:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ConfigError(f"depth must be a whole number of hits, 1 or more; got {depth!r}")
    one = {"run_id": run_id, "query_id": query_id}
    questions = _rows(source, "question", **one)
    if not questions:
        return {}
    gold = _by_query([_paged(row) for row in _rows(source, "gold", **one)])
    stages = _stages(source, one, depth)
    answers = _answers(source, one)
    details = {}
    for q in questions:
        qid = q["query_id"]
        query = {k: q[k] for k in ("query_id", "query_text", "category", "form", "hard_class", "unanswerable",
                                   "notes")}
        query.update(answerable=bool(q["answerable"]), n_results=q["n_results"], latency_ms=q["latency_ms"])
        details[qid] = {"run_id": run_id, "pipeline": q["pipeline"], "query": query, "gold": gold.get(qid, []),
                        "lost_at": q["lost_at"], "answer_lost_at": q["answer_lost_at"],
                        "stages": stages.get(qid, []), "answer": answers.get(qid)}
    return details


def _stages(source, one: dict, depth: int) -> dict[str, list[dict]]:
    marks: dict[tuple, list] = {}
    for m in _rows(source, "marks", depth=depth, **one):
        marks.setdefault((m["query_id"], m["stage"], m["rank"]), []).append(
            {"gold_idx": m["gold_idx"], "start": m["mark_start"], "end": m["mark_end"]})
    hits: dict[tuple, list] = {}
    for h in _rows(source, "hits", depth=depth, **one):
        hit_marks = marks.get((h["query_id"], h["stage"], h["rank"]), [])
        hits.setdefault((h["query_id"], h["stage"]), []).append({
            "rank": h["rank"], "chunk_id": h["chunk_id"], "doc_id": h["doc_id"], "score": h["score"],
            "start_char": h["start_char"], "end_char": h["end_char"], "text": h["text"],
            "relevant": bool(hit_marks), "grade": h["grade"], "marks": hit_marks,
            "beyond_depth": bool(h["beyond_depth"]), **_pages(h)})
    stages: dict[str, list[dict]] = {}
    for s in _rows(source, "stages", **one):
        s["hits"] = hits.get((s["query_id"], s["stage"]), [])
        stages.setdefault(s.pop("query_id"), []).append(s)
    return stages


def _answers(source, one: dict) -> dict[str, dict]:
    claims: dict[str, dict[int, dict]] = {}
    for row in _rows(source, "claims", **one):
        claim = claims.setdefault(row["query_id"], {}).setdefault(row["claim_idx"], {
            "claim_idx": row["claim_idx"], "text": row["text"], "kept": bool(row["kept"]), "reason": row["reason"],
            "citations": []})
        if row["cite_idx"] is not None:
            claim["citations"].append({
                "cite_idx": row["cite_idx"], "chunk_id": row["chunk_id"], "quote": row["quote"],
                "valid": bool(row["valid"]), "reason": row["cite_reason"], "doc_id": row["doc_id"],
                "start_char": row["start_char"], "end_char": row["end_char"]})
    context = _by_query(_rows(source, "context", **one))
    answers = {}
    for a in _rows(source, "answer", **one):
        qid = a["query_id"]
        answers[qid] = {
            "status": a["status"], "refusal": a["refusal"], "failure_stage": a["failure_stage"],
            "generator": a["generator"], "mode": a["mode"], "excerpt": a["response_excerpt"], "error": a["error"],
            "claims_returned": a["claims_returned"], "claims_kept": a["claims_kept"], "latency_ms": a["latency_ms"],
            "claims": list(claims.get(qid, {}).values()), "drops": json.loads(a["drops"]) if a["drops"] else {},
            "context": [r["chunk_id"] for r in context.get(qid, [])]}
    return answers
