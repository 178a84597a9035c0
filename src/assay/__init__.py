"""assay: retrieval evaluation for RAG pipelines.

Quote-anchored golden sets, a DuckDB warehouse of runs, metrics in SQL.
"""

__version__ = "0.1.0"
