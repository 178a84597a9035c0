"""Retrievers that live outside assay: a Python function, a program, an HTTP service, a stored TREC run, a plugin.

One file per kind: ``callable.py``, ``command.py``, ``http_service.py``, ``trec_run.py``,
``plugins.py``. What every one answers (a JSON list of results, best first) is described and
checked in ``results.py``. This module gathers them under the names the runner and plugins import.
"""

from assay.retrieval.callable import CallableRetriever
from assay.retrieval.command import CommandRetriever
from assay.retrieval.http_service import HttpRetriever
from assay.retrieval.plugins import PLUGIN_GROUP, load_plugin, plugin_names, plugin_retriever
from assay.retrieval.results import parse_results
from assay.retrieval.trec_run import TrecRunRetriever

__all__ = ["CallableRetriever", "CommandRetriever", "HttpRetriever", "PLUGIN_GROUP", "TrecRunRetriever",
           "load_plugin", "parse_results", "plugin_names", "plugin_retriever"]
