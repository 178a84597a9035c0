"""Fusion of ranked lists: one method per module, each returning a list ordered by `rank_hits`."""

from __future__ import annotations

from assay.core.errors import ConfigError

METHODS = ("rrf", "weighted")


def fuse(method: str, lists: dict[str, list], params: dict) -> list:
    if method == "rrf":
        from assay.retrieval.fusion.rrf import rrf

        return rrf(lists, k=params.get("rrf_k", 60))
    if method == "weighted":
        from assay.retrieval.fusion.weighted import weighted_sum

        return weighted_sum(lists, params.get("weights") or {})
    raise ConfigError(f"unknown fusion {method!r}; choose one of: {', '.join(METHODS)}")
