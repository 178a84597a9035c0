"""Golden sets: the judgments contract users write by hand, its parser, quote resolution and lints."""

from assay.inputs.judgments.vocabulary import CATEGORIES, FORMS, UNANSWERABLE, UNLABELED

# the records, the parser and the resolver (corpus reading, markup) load when first asked for: the CLI imports this
# package for the labels' words alone, on every command
_LAZY = {"GoldEntry": "assay.inputs.judgments.model", "GoldSpan": "assay.inputs.judgments.model", "Judgment": "assay.inputs.judgments.model",
         "JudgmentSet": "assay.inputs.judgments.model", "load_judgments": "assay.inputs.judgments.parse",
         "parse_judgments": "assay.inputs.judgments.parse", "resolve_gold": "assay.inputs.judgments.resolve"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CATEGORIES", "FORMS", "UNANSWERABLE", "UNLABELED", "GoldEntry", "GoldSpan", "Judgment", "JudgmentSet",
    "load_judgments", "parse_judgments", "resolve_gold",
]
