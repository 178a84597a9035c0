"""Metrics: what each measure is (the registry) apart from how it is computed (SQL over stored hits)."""

from assay.measures.registry import DEFAULT_MEASURES, MEASURES, Measure, parse_measure

__all__ = ["DEFAULT_MEASURES", "MEASURES", "Measure", "parse_measure"]
