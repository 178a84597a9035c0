"""What a run ranks (its retrieval unit), and the warning when two compared runs rank different units.

Chunk-level hit measures credit any result that overlaps a gold span, so a larger unit
(a 1,600-character chunk, a whole document) scores higher without being better context.
Comparisons across units must read the span and budgeted measures instead.
"""

from __future__ import annotations

import json

SPAN_ADVICE = ("chunk-level hit measures (Success, R, P, RR, nDCG, AP at chunk level) credit any result that "
               "overlaps a gold span, so the larger unit scores higher without being better context; read "
               "SpanRecall/SpanPrecision and the @Ntok measures (e.g. SpanRecall@1000tok, Success@1000tok), which "
               "charge each result for its size (docs/chunking.md)")


def describe(warehouse, run_id: str) -> dict:
    """{'kind': 'documents'|'chunks'|'mixed', 'label', 'mean_chars', 'mean_tokens', 'n_results'} of the final lists."""
    from assay.inputs.chunking import chunker_label

    cols, rows = warehouse.query("reports/result_unit", run_id=run_id)
    stats = dict(zip(cols, rows[0]))
    config = json.loads(warehouse.con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0])
    n, whole = stats["n_results"] or 0, stats["whole_documents"] or 0
    external = "external" in config.get("stages", [])
    if n and whole == n:
        kind = "documents"
    elif whole and not external and config["chunker"].get("name") != "document":
        kind = "chunks"  # a short document can be one chunk; that does not make the run document-level
    elif whole:
        kind = "mixed"
    else:
        kind = "chunks"
    label = ("whole documents" if kind == "documents" else
             f"{'external spans' if external else chunker_label(config['chunker']) + ' chunks'}"
             + (f", {whole} of {n} results whole documents" if kind == "mixed" else ""))
    return {"kind": kind, "label": label, "mean_chars": stats["mean_chars"], "mean_tokens": stats["mean_tokens"],
            "n_results": n}


def _size(u: dict) -> str:
    if not u["n_results"]:
        return "no results"
    tokens = "" if u["mean_tokens"] is None else f", {u['mean_tokens']:.0f} tokens"
    return f"mean {u['mean_chars']:,.0f} characters{tokens}"


def differ(a: dict, b: dict) -> str | None:
    """A warning when runs A and B rank different units, else None."""
    if a["label"] == b["label"]:
        return None
    return (f"retrieval units differ: A ranks {a['label']} ({_size(a)}), B ranks {b['label']} ({_size(b)}); "
            + SPAN_ADVICE)
