"""Golden sets: the judgments contract users write by hand, its parser, quote resolution and lints."""

from assay.judgments.model import CATEGORIES, FORMS, UNANSWERABLE, GoldEntry, GoldSpan, Judgment, JudgmentSet
from assay.judgments.parse import load_judgments, parse_judgments
from assay.judgments.resolve import resolve_gold

__all__ = [
    "CATEGORIES", "FORMS", "UNANSWERABLE", "GoldEntry", "GoldSpan", "Judgment", "JudgmentSet",
    "load_judgments", "parse_judgments", "resolve_gold",
]
