"""assay: retrieval evaluation for RAG pipelines.

Quote-anchored golden sets, a DuckDB warehouse of runs, metrics in SQL.
"""

__version__ = "0.1.0"


def evaluate(retriever, judgments, corpus, warehouse=None, **options):
    """Evaluate any retriever from Python; see assay.api.evaluate."""
    from assay.api import evaluate as _evaluate

    return _evaluate(retriever, judgments, corpus, warehouse, **options)
