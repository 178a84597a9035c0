"""assay's optional parts: which extra a feature needs, and one line saying how to install it when it is missing.

The core (``pip install assay``) runs BM25 pipelines, every measure, reports as text, JSON, CSV and Markdown,
history, gates, ``assay sql`` and ``eval-trec``. Each extra adds the packages of a few features; pyproject.toml's
``[project.optional-dependencies]`` holds the same names. A feature calls ``require(extra, what)`` before it does
any work, so a command that needs a missing extra stops at once, with exit code 2 and one line::

    error: --format html needs assay's html extra: pip install 'assay[html]'

Whether an extra is installed is read from the import system (``importlib.util.find_spec`` on each top-level
module), without importing anything: checking costs microseconds, not the seconds onnxruntime takes to load.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from assay.core.errors import ExtraMissing


@dataclass(frozen=True)
class Extra:
    modules: tuple[str, ...]  # top-level modules the extra installs; all present = installed
    features: str  # what it is for, as the install page and `assay models` say it


EXTRAS = {
    "dense": Extra(("fastembed", "onnxruntime"),
                   "dense and hybrid pipelines, the cross-encoder reranker, the offline embedding model"),
    "html": Extra(("altair", "vl_convert"), "--format html reports with charts"),
    "pdf": Extra(("pdfminer",), "PDF files in a corpus"),
    "docx": Extra(("docx",), "Word .docx files in a corpus"),
    "ibis": Extra(("ibis",), "Ibis expressions over a warehouse or lake (assay.analytics.connect)"),
    "spark": Extra(("pyspark", "ibis"), "assay lake --engine spark"),
}


def missing(extra: str) -> list[str]:
    """The extra's modules that cannot be imported here (empty: installed)."""
    return [name for name in EXTRAS[extra].modules if not _importable(name)]


def installed(extra: str) -> bool:
    return not missing(extra)


def require(extra: str, what: str) -> None:
    """Raise ``ExtraMissing`` (exit code 2) unless ``extra`` is installed; ``what`` names the feature that needs
    it, as the user asked for it (an option, a pipeline, a file)."""
    if missing(extra):
        raise ExtraMissing(extra, what)


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module without a spec, or a broken parent package
        return False
