"""Retrievers installed by other packages under the entry point group ``assay.retrievers``."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata

from assay.core.errors import RetrieverError

PLUGIN_GROUP = "assay.retrievers"


def _plugin_entry_points() -> dict[str, list[metadata.EntryPoint]]:
    found: dict[str, list[metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=PLUGIN_GROUP):
        same = found.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):  # one distribution seen twice is not a clash
            same.append(ep)
    return found


def plugin_names() -> list[str]:
    """Names of the retrievers installed under the entry point group ``assay.retrievers``."""
    return sorted(_plugin_entry_points())


def load_plugin(name: str):
    """The factory ``factory(docs, **options)`` registered under ``name`` in ``assay.retrievers``."""
    found = _plugin_entry_points()
    if name not in found:
        available = ", ".join(sorted(found)) or "none installed"
        raise RetrieverError(f"unknown retriever plugin {name!r}; available ({PLUGIN_GROUP}): {available}")
    if len(found[name]) > 1:
        values = ", ".join(ep.value for ep in found[name])
        raise RetrieverError(f"retriever plugin {name!r} is registered more than once ({values}); "
                             "uninstall one of the packages")
    ep = found[name][0]
    try:
        return ep.load()
    except Exception as exc:
        raise RetrieverError(f"retriever plugin {name!r} ({ep.value}) cannot be loaded: "
                             f"{type(exc).__name__}: {exc}") from exc


def plugin_retriever(name: str, docs: Mapping[str, int], **options):
    """Build the plugin retriever ``name`` and check that it has ``search`` and ``config``."""
    factory = load_plugin(name)
    try:
        retriever = factory(docs, **options)
    except RetrieverError:
        raise
    except Exception as exc:
        raise RetrieverError(f"retriever plugin {name!r} failed to start: {type(exc).__name__}: {exc}") from exc
    missing = [m for m in ("search", "config") if not callable(getattr(retriever, m, None))]
    if missing:
        raise RetrieverError(f"retriever plugin {name!r} returned {type(retriever).__name__}, "
                             f"which lacks {' and '.join(m + '()' for m in missing)}")
    return retriever
