"""`assay answers revalidate RUN --max-quote N`: apply the citation contract again to stored replies.

Every model reply (or extractive payload) is stored in ``answer_raw``, and the chunks each
question saw in ``answer_context``, so a change to the validator (here: the quote length
limit) or to the labels recomputes every answer metric without calling the model. The
result is a new run of kind 'revalidate' linked to the source run, with the source's hits.
"""

from __future__ import annotations

import json

from assay.core import jsonin
from assay.retrieval.answer.contract import parse_claims, validate
from assay.retrieval.answer.generate import _tool_payload
from assay.retrieval.answer.stage import (ANSWER_COLUMNS, CITATION_COLUMNS, CLAIM_COLUMNS, checked_rows, is_cut,
                                          outcome)


def payload_from_raw(mode: str, raw: str):
    """(payload, problem) from one stored reply, parsed as the generator parsed it."""
    try:
        data = jsonin.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    except ValueError as exc:
        return None, str(exc)
    if mode == "extractive":
        return data, None
    message = ((data.get("choices") or [{}])[0] or {}).get("message") or {}
    if mode == "tool":
        return _tool_payload(message)
    try:
        return jsonin.loads(message.get("content") or ""), None
    except json.JSONDecodeError as exc:
        return None, f"json-fallback: not JSON ({exc.msg})"
    except ValueError as exc:
        return None, f"json-fallback: {exc}"


def revalidate(warehouse, run_ref: str, max_quote: int) -> dict:
    from assay.store.collections import corpus_by_hash

    source = warehouse.resolve_run_id(run_ref)
    (config, corpus_hash), = warehouse.con.execute(
        "SELECT config, corpus_hash FROM runs WHERE run_id = ?", [source]).fetchall()
    config = json.loads(config)
    if "generator" not in config.get("retrieval", {}):
        from assay.core.errors import AssayError

        raise AssayError(f"run {source} has no answer stage (run it with --generator)")
    docs = corpus_by_hash(warehouse, corpus_hash).by_id()

    def text_of(chunk_id):
        doc, span = chunk_id.rsplit("#", 1)
        a, b = (int(x) for x in span.split("-"))
        return docs[doc].text[a:b]

    contexts: dict[str, list[str]] = {}
    for qid, cid in warehouse.con.execute("SELECT query_id, chunk_id FROM answer_context WHERE run_id = ? "
                                          "ORDER BY query_id, position", [source]).fetchall():
        contexts.setdefault(qid, []).append(cid)
    raws: dict[str, list[tuple[str, str]]] = {}
    for qid, mode, raw in warehouse.con.execute("SELECT query_id, mode, raw FROM answer_raw WHERE run_id = ? "
                                                "ORDER BY query_id, attempt", [source]).fetchall():
        raws.setdefault(qid, []).append((mode, raw))
    old = warehouse.con.execute(f"SELECT {', '.join(ANSWER_COLUMNS)} FROM answers WHERE run_id = ? ORDER BY query_id",
                                [source]).fetchall()
    unread = sum(1 for row in old if (a := dict(zip(ANSWER_COLUMNS, row)))["status"] != "failed"
                 and a["refusal"] not in ("no_results", "calibration")
                 and (a["query_id"] not in raws or is_cut(raws[a["query_id"]][-1][1])))
    if unread:
        from assay.core.errors import AssayError

        raise AssayError(f"run {source} kept {unread} model replies only in part or not at all (its max_reply_chars "
                         f"is {config['settings'].get('max_reply_chars')}): they cannot be checked again; "
                         "revalidate a run stored with max_reply_chars large enough, or run the questions again")
    answers, claims, citations, changed = [], [], [], 0
    for row in old:
        a = dict(zip(ANSWER_COLUMNS, row))
        qid = a["query_id"]
        if a["status"] == "failed" or a["refusal"] in ("no_results", "calibration") or qid not in raws:
            answers.append(row)
            continue
        mode, raw = raws[qid][-1]
        payload, problem = payload_from_raw(mode, raw)
        parsed, insufficient, errors = parse_claims(payload) if problem is None else ([], False, [problem])
        context = {cid: text_of(cid) for cid in contexts.get(qid, [])}
        checked = validate(parsed, context, max_quote) if parsed and not errors else []
        claim_rows, cite_rows, kept, drops = checked_rows(qid, checked)
        claims += claim_rows
        citations += cite_rows
        status, reason, stage = outcome(None, errors, kept, insufficient)
        new = {**a, "status": status, "refusal": reason, "failure_stage": stage, "claims_returned": len(checked),
               "claims_kept": kept, "drops": drops,
               "parse_errors": json.dumps(errors) if errors else None}
        changed += new["claims_kept"] != a["claims_kept"] or new["status"] != a["status"]
        answers.append(tuple(new[c] for c in ANSWER_COLUMNS))
    config["revalidate_of"] = source
    config["retrieval"]["generator"]["max_quote"] = max_quote
    config["settings"]["max_quote"] = max_quote
    from assay.measures.values import score_run, store_values

    with warehouse.transaction():
        run_id = warehouse.derive_run(source, "revalidate", config)
        score_run(warehouse, run_id)
        warehouse._insert("answers", ["run_id"] + ANSWER_COLUMNS, [(run_id, *r) for r in answers])
        warehouse._insert("claims", ["run_id"] + CLAIM_COLUMNS, [(run_id, *r) for r in claims])
        warehouse._insert("citations", ["run_id"] + CITATION_COLUMNS, [(run_id, *r) for r in citations])
        store_values(warehouse, run_id)  # the answer measures, now that the answers are in (values stored are kept)
    from assay.store.snapshot import refresh

    refresh(warehouse)
    return {"run_id": run_id, "source_run_id": source, "max_quote": max_quote, "questions": len(answers),
            "answers_changed": changed, "model_calls": 0}
