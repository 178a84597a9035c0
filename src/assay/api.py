"""The Python API: evaluate any retriever and store the run like any other.

    import assay

    def my_retriever(question: str, limit: int):
        return [{"doc_id": "storage/wal.md", "score": 3.2}, "ops/runbook.md"]   # best first

    result = assay.evaluate(retriever=my_retriever, judgments="judgments/demo/judgments.jsonl",
                            corpus="judgments/demo/corpus")
    print(result["run_id"], result["report"]["metrics"][0])

The callable takes a question and a limit and returns ranked results, best first:
document ids, ``(doc_id, score)`` pairs, or objects ``{"doc_id", "score"?, "start"?,
"end"?}`` / ``{"chunk_id"}`` where a span is a character range of the document's
text (a chunk-level result); without a span the whole document is the result.
"""

from __future__ import annotations

from assay.runner import RunOptions, execute_run


def evaluate(retriever, judgments, corpus, warehouse=None, *, depth: int = 100, seed: int = 0,
             progress=None, **settings) -> dict:
    """Run ``retriever`` over every question; store the run; return {"run_id", "report"}.

    ``warehouse`` is a path (default: $ASSAY_WAREHOUSE, else warehouse/assay.duckdb) or an open
    ``assay.warehouse.Warehouse``. Further keyword settings are those of ``RunOptions``
    (e.g. ``chunker="document"``, ``final_k=10``, ``calibration=...``).
    """
    from assay.report import build_report
    from assay.warehouse import Warehouse

    if not callable(retriever):
        raise TypeError("retriever must be a callable taking (question, limit)")
    options = RunOptions("python", depth=depth, seed=seed, python_retriever=retriever, **settings)
    if isinstance(warehouse, Warehouse):
        record = execute_run(corpus, judgments, options, progress, warehouse=warehouse)
        warehouse.write_run(record)
        return {"run_id": record.run_id, "report": build_report(warehouse, record.run_id)}
    # a path: the run computes without holding the warehouse, then writes in one short transaction
    brief = Warehouse.brief(warehouse)
    record = execute_run(corpus, judgments, options, progress, warehouse=brief)
    brief.write_run(record)
    with Warehouse.open(brief.path, read_only=True) as wh:
        return {"run_id": record.run_id, "report": build_report(wh, record.run_id)}
