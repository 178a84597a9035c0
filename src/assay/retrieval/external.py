"""Retrievers that live outside assay: a Python function, a program, an HTTP service, a stored TREC run, a plugin.

Every one answers a question with a JSON list of results, best first. A result is
either a document id string or an object::

    {"doc_id": "guide.md", "score": 3.2, "start": 120, "end": 480}   # start/end optional
    {"chunk_id": "guide.md#120-480", "score": 3.2}                   # score optional

A span is characters [start, end) of the assay document text; no span means the
whole document, i.e. chunk ``<doc_id>#0-<length>``. The external system's order
is its ranking and is kept as given: assay does not re-sort, so how equal scores
are ordered is the external system's business (``TIE_BREAK`` does not apply).

Programs and services may also answer ``{"results": [...]}``.

One file per kind: ``callable.py``, ``command.py``, ``http_service.py``, ``trec_run.py``,
``plugins.py``; what they all answer is checked by ``results.py``. This module gathers them
under the names the runner and plugins import.
"""

from assay.retrieval.callable import CallableRetriever
from assay.retrieval.command import CommandRetriever
from assay.retrieval.http_service import HttpRetriever
from assay.retrieval.plugins import PLUGIN_GROUP, load_plugin, plugin_names, plugin_retriever
from assay.retrieval.results import parse_results
from assay.retrieval.trec_run import TrecRunRetriever

__all__ = ["CallableRetriever", "CommandRetriever", "HttpRetriever", "PLUGIN_GROUP", "TrecRunRetriever",
           "load_plugin", "parse_results", "plugin_names", "plugin_retriever"]
