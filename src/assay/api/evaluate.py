"""The Python API: evaluate any retriever and store the run like any other.

    import assay

    def my_retriever(question: str, limit: int):
        return [{"doc_id": "storage/wal.md", "score": 3.2}, "ops/runbook.md"]   # best first

    result = assay.evaluate(retriever=my_retriever, judgments="judgments/demo/judgments.jsonl",
                            corpus="judgments/demo/corpus", name="my-retriever")
    print(result["run_id"], result["report"]["metrics"][0])
    result.to_pandas()   # a row per metric, level and slice; in a notebook, `result` shows as a table

The callable takes a question and a limit and returns ranked results, best first:
document ids, ``(doc_id, score)`` pairs, or objects ``{"doc_id", "score"?, "start"?,
"end"?}`` / ``{"chunk_id"}`` where a span is a character range of the document's
text (a chunk-level result); without a span the whole document is the result.
"""

from __future__ import annotations

import os

from assay.core.errors import ConfigError
from assay.present.notebook import Evaluation
from assay.runs.runner import RunOptions, execute_run

DEFAULT_NAME = "python"


def check_name(name) -> str:
    """``name`` when it can name a pipeline (in `assay runs`, history, gate and regress): a non-empty
    string of printable characters, no path separator, no space at either end; else a ConfigError."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"name must be a non-empty string naming the retriever, got {name!r}")
    bad = sorted({c for c in name if not c.isprintable()})
    if bad:
        raise ConfigError(f"name {name!r} holds characters that do not print ({', '.join(map(repr, bad))}); "
                          "use letters, digits and punctuation such as my-retriever")
    separators = [sep for sep in {"/", "\\", os.sep, os.altsep} if sep and sep in name]
    if separators:
        raise ConfigError(f"name {name!r} holds a path separator ({', '.join(map(repr, sorted(separators)))}); "
                          "a pipeline name is not a path: use e.g. my-retriever")
    if name != name.strip():
        raise ConfigError(f"name {name!r} starts or ends with a space")
    from assay.retrieval.pipelines import BUILTIN

    if name in BUILTIN and name != DEFAULT_NAME:  # its history, gate and regress baselines would mix with theirs
        raise ConfigError(f"name {name!r} is a built-in pipeline's name; a Python retriever's runs need their own "
                          "(e.g. my-retriever)")
    return name


def evaluate(retriever, judgments=None, corpus=None, warehouse=None, *, name: str = DEFAULT_NAME, depth: int = 100,
             seed: int = 0, progress=None, **settings) -> Evaluation:
    """Run ``retriever`` over every question; store the run under the pipeline name ``name``; return an
    ``Evaluation``: the dict {"run_id", "report"}, convertible with ``to_pandas()`` / ``to_arrow()``.

    ``judgments`` and ``corpus``: paths (or ``@NAME``); by default ``[project] judgments`` and ``corpus`` of the
    project's assay.toml (assay.inputs.project.project_input; a UsageError when there is none).

    ``name`` (default "python") is how `assay runs`, `assay history`, gate and regress know this
    retriever: give each retriever its own so their histories stay apart. ``warehouse`` is a path or an
    open ``assay.store.warehouse.Warehouse``; by default the project's, found as the CLI finds it
    (assay.inputs.project: $ASSAY_WAREHOUSE, else that of the nearest assay.toml, here or above, else
    warehouse/assay.duckdb). Further keyword settings are those of ``RunOptions`` (e.g.
    ``chunker="document"``, ``final_k=10``, ``calibration=...``, ``config_path=...``). The config and
    warehouse used are logged (logger ``assay.project``, INFO) and returned as ``.config`` and ``.warehouse``.
    """
    from assay.inputs import project
    from assay.present.report import build_report
    from assay.runs.sinks import store_run
    from assay.store.warehouse import Warehouse

    if not callable(retriever):
        raise TypeError("retriever must be a callable taking (question, limit)")
    options = RunOptions(DEFAULT_NAME, depth=depth, seed=seed, python_retriever=retriever, name=check_name(name),
                         **settings)
    config = project.tell_config(options.config_path)
    judgments = project.project_input("judgments", judgments, "judgments=", options.config_path)
    corpus = project.project_input("corpus", corpus, "corpus=", options.config_path)
    if isinstance(warehouse, Warehouse):
        warehouse.check_writable()
        record = execute_run(corpus, judgments, options, progress, warehouse=warehouse)
        store_run(warehouse, record)
        return Evaluation(run_id=record.run_id, report=build_report(warehouse, record.run_id),
                          warehouse=warehouse.path, config=config)
    # a path: the run computes without holding the warehouse, then writes in one short transaction
    brief = Warehouse.brief(project.tell_warehouse(warehouse, options.config_path))
    brief.check_writable()  # before any work: a warehouse the run could not be written to is found now
    record = execute_run(corpus, judgments, options, progress, warehouse=brief)
    store_run(brief, record)
    with Warehouse.open(brief.path, read_only=True) as wh:
        return Evaluation(run_id=record.run_id, report=build_report(wh, record.run_id), warehouse=brief.path,
                          config=config)
