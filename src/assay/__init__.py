"""assay: retrieval evaluation for RAG pipelines.

Quote-anchored golden sets, a DuckDB warehouse of runs, metrics in SQL.
"""

__version__ = "0.1.0"


def evaluate(retriever, judgments=None, corpus=None, warehouse=None, **options):
    """Evaluate any retriever from Python, stored under ``name=`` (default "python"); see assay.api.evaluate."""
    from assay.api.evaluate import evaluate as _evaluate

    return _evaluate(retriever, judgments, corpus, warehouse, **options)


def evaluate_run(qrels, run, measures=("nDCG@10", "AP", "RR@10", "R@100", "P@10", "Success@1"), **options):
    """Score a run held in memory (dicts, DataFrames or Arrow tables) against qrels; per-query values
    as an Arrow table (``to_pandas()``, ``to_arrow()``; an HTML table in a notebook). See
    assay.api.evaluate_run.evaluate_run."""
    from assay.api.evaluate_run import evaluate_run as _evaluate_run

    return _evaluate_run(qrels, run, measures, **options)
