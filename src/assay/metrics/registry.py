"""Every measure, defined once, under its ir_measures name. Help text, docs and reports read this.

Chunk level: a retrieved chunk is relevant when its span overlaps a gold span;
each gold entry (unit) is credited once, at the first rank that overlaps it, and
that rank's gain is the highest grade among the units it newly covers. A chunk
that only overlaps already-credited units counts as not relevant, so overlapping
chunks never lift a metric above 1.
Document level: the ranking collapsed to first-seen distinct documents; each
distinct gold document is a unit, graded by its best gold entry.
Span measures (SpanRecall, SpanPrecision, SpanIoU) compare text, not items: the
retrieved text (the union of the retrieved spans, each character once) against the
gold text (the union of the gold spans), in characters of the document text.
Context budgets (``@1000tok``): results are taken in rank order until 1,000 tokens
are filled, the last one cut at the token that fills the budget; tokens are word
pieces of the tokenizer assay ships (assay.budget). Budgeted measures are chunk
level only: what matters is the text a prompt would hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.errors import ConfigError

NO_CUTOFF = 2_147_483_647


@dataclass(frozen=True)
class MeasureFamily:
    name: str  # ir_measures name
    sql: str  # file under sql/measures
    interval: str  # 'wilson' for 0/1 per-question values, 'bootstrap' for graded ones
    cutoff: str  # 'required', 'optional' or 'none'
    definition: str
    levels: tuple[str, ...] = ("chunk", "doc")
    answerable_only: bool = True
    unit: str = "question"  # what one value is about: question, citation or claim (only questions pair across runs)
    budget_sql: str | None = None  # the file that computes the budgeted variant (@Ntok); None: no budgets
    reads_tokens: bool = False  # its SQL counts tokens (span measures, at any cutoff)


FAMILIES = {
    f.name: f
    for f in (
        MeasureFamily("Success", "measures/success", "wilson", "required",
                      "1 if any relevant item is in the top k, else 0 (the hit rate; many RAG teams call it recall@k); "
                      "@Ntok: 1 if the text within a budget of N tokens overlaps a gold span",
                      budget_sql="measures/success_budget"),
        MeasureFamily("R", "measures/recall", "bootstrap", "required",
                      "share of gold units covered by the top k (set recall)"),
        MeasureFamily("P", "measures/precision", "bootstrap", "required",
                      "credited items in the top k divided by k"),
        MeasureFamily("RR", "measures/reciprocal_rank", "bootstrap", "optional",
                      "1 / rank of the first relevant item (within the top k), else 0"),
        MeasureFamily("nDCG", "measures/ndcg", "bootstrap", "optional",
                      "DCG of the top k (gain / log2(rank + 1), linear grades) over the ideal DCG; @Ntok: the ranks "
                      "within a budget of N tokens, the last one credited only for the gold its cut text overlaps, "
                      "over the ideal DCG of every gold unit",
                      budget_sql="measures/ndcg_budget"),
        MeasureFamily("AP", "measures/average_precision", "bootstrap", "optional",
                      "mean over gold units of the precision at the rank each is credited; 0 for units not found"),
        MeasureFamily("SpanRecall", "measures/span_recall", "bootstrap", "required",
                      "share of the gold text (characters of the gold spans) covered by the retrieved text",
                      levels=("chunk",), budget_sql="measures/span_recall", reads_tokens=True),
        MeasureFamily("SpanPrecision", "measures/span_precision", "bootstrap", "required",
                      "share of the retrieved text (characters, overlapping results counted once) inside gold spans",
                      levels=("chunk",), budget_sql="measures/span_precision", reads_tokens=True),
        MeasureFamily("SpanIoU", "measures/span_iou", "bootstrap", "required",
                      "retrieved text intersected with gold text, over their union (characters)",
                      levels=("chunk",), budget_sql="measures/span_iou", reads_tokens=True),
        MeasureFamily("Abstain", "measures/abstention", "wilson", "none",
                      "share of no_answer questions for which the pipeline returned nothing",
                      levels=("query",), answerable_only=False),
        MeasureFamily("FalseAbstain", "measures/abstention", "wilson", "none",
                      "share of answerable questions for which the pipeline wrongly returned nothing",
                      levels=("query",), answerable_only=True),
        MeasureFamily("answer_rate", "measures/answer_rate", "wilson", "none",
                      "share of answerable questions whose answer kept at least one valid claim",
                      levels=("answer",)),
        MeasureFamily("refusal_rate", "measures/refusal_rate", "wilson", "none",
                      "share of no_answer questions whose answer refused (kept no claim)",
                      levels=("answer",), answerable_only=False),
        MeasureFamily("citation_precision", "measures/citation_precision", "wilson", "none",
                      "rule-based: share of citations (of kept claims) whose chunk overlaps a gold span",
                      levels=("answer",), answerable_only=False, unit="citation"),
        MeasureFamily("faithfulness", "measures/faithfulness", "wilson", "none",
                      "rule-based: share of kept claims whose every citation quotes text overlapping a gold span",
                      levels=("answer",), answerable_only=False, unit="claim"),
        MeasureFamily("judged_faithfulness", "measures/judged_faithfulness", "wilson", "none",
                      "share of kept claims a judge model (never the generator's) found supported by their quotes",
                      levels=("answer",), answerable_only=False, unit="claim"),
    )
}


@dataclass(frozen=True)
class Measure:
    family: MeasureFamily
    cutoff: int | None
    budget: int | None = None  # a context budget in tokens (``@1000tok``) instead of a rank cutoff

    @property
    def name(self) -> str:
        if self.budget is not None:
            return f"{self.family.name}@{self.budget}tok"
        return self.family.name if self.cutoff is None else f"{self.family.name}@{self.cutoff}"

    @property
    def k(self) -> int:
        return NO_CUTOFF if self.cutoff is None else self.cutoff

    @property
    def levels(self) -> tuple[str, ...]:
        return ("chunk",) if self.budget is not None else self.family.levels

    @property
    def sql(self) -> str:
        return self.family.budget_sql if self.budget is not None else self.family.sql

    @property
    def uses_budget(self) -> bool:
        """Whether the SQL reads token counts (span and budgeted measures)."""
        return self.budget is not None or self.family.reads_tokens

    def params(self, run_id: str, stage: str) -> dict:
        """The bound parameters of the measure's SQL."""
        params = {"run_id": run_id, "stage": stage, "k": self.k}
        if self.uses_budget:
            params["budget"] = NO_CUTOFF if self.budget is None else self.budget
        return params

    def __repr__(self) -> str:
        return self.name


def parse_measure(text: str) -> Measure:
    m = re.fullmatch(r"\s*([A-Za-z_]+)(?:@(\d+)(tok)?)?\s*", text)
    family = FAMILIES.get(m.group(1)) if m else None
    if family is None:
        raise ConfigError(f"unknown measure {text!r}; known: {', '.join(FAMILIES)} "
                          "(e.g. nDCG@10, Success@3, AP, SpanRecall@1000tok)")
    number = int(m.group(2)) if m.group(2) else None
    if number is not None and number < 1:
        raise ConfigError(f"measure {text!r}: the cutoff must be at least 1")
    if m.group(3):
        if family.budget_sql is None:
            budgeted = ", ".join(f.name for f in FAMILIES.values() if f.budget_sql)
            raise ConfigError(f"measure {family.name} takes no context budget; budgets (@Ntok) apply to {budgeted}")
        return Measure(family, None, number)
    if family.cutoff == "required" and number is None:
        example = f"{family.name}@10" + (f" or {family.name}@1000tok" if family.budget_sql else "")
        raise ConfigError(f"measure {text!r} needs a cutoff, e.g. {example}")
    if family.cutoff == "none" and number is not None:
        raise ConfigError(f"measure {family.name} takes no cutoff")
    return Measure(family, number)


DEFAULT_MEASURES = tuple(
    parse_measure(name)
    for name in ("Success@1", "Success@3", "Success@10", "R@10", "P@5", "RR@10", "nDCG@10", "AP",
                 "SpanRecall@1000tok", "SpanPrecision@1000tok", "Success@1000tok", "nDCG@1000tok",
                 "Abstain", "FalseAbstain",
                 "answer_rate", "refusal_rate", "citation_precision", "faithfulness", "judged_faithfulness")
)
MEASURES = FAMILIES
