"""Every measure, defined once, under its ir_measures name. Help text, docs and reports read this.

Chunk level: a retrieved chunk is relevant when its span overlaps a gold span;
each gold entry (unit) is credited once, at the first rank that overlaps it, and
that rank's gain is the highest grade among the units it newly covers. A chunk
that only overlaps already-credited units counts as not relevant, so overlapping
chunks never lift a metric above 1.
Document level: the ranking collapsed to first-seen distinct documents; each
distinct gold document is a unit, graded by its best gold entry.
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


FAMILIES = {
    f.name: f
    for f in (
        MeasureFamily("Success", "measures/success", "wilson", "required",
                      "1 if any relevant item is in the top k, else 0 (the hit rate; many RAG teams call it recall@k)"),
        MeasureFamily("R", "measures/recall", "bootstrap", "required",
                      "share of gold units covered by the top k (set recall)"),
        MeasureFamily("P", "measures/precision", "bootstrap", "required",
                      "credited items in the top k divided by k"),
        MeasureFamily("RR", "measures/reciprocal_rank", "bootstrap", "optional",
                      "1 / rank of the first relevant item (within the top k), else 0"),
        MeasureFamily("nDCG", "measures/ndcg", "bootstrap", "optional",
                      "DCG of the top k (gain / log2(rank + 1), linear grades) over the ideal DCG"),
        MeasureFamily("AP", "measures/average_precision", "bootstrap", "optional",
                      "mean over gold units of the precision at the rank each is credited; 0 for units not found"),
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

    @property
    def name(self) -> str:
        return self.family.name if self.cutoff is None else f"{self.family.name}@{self.cutoff}"

    @property
    def k(self) -> int:
        return NO_CUTOFF if self.cutoff is None else self.cutoff

    def __repr__(self) -> str:
        return self.name


def parse_measure(text: str) -> Measure:
    m = re.fullmatch(r"\s*([A-Za-z_]+)(?:@(\d+))?\s*", text)
    family = FAMILIES.get(m.group(1)) if m else None
    if family is None:
        raise ConfigError(f"unknown measure {text!r}; known: {', '.join(FAMILIES)} (e.g. nDCG@10, Success@3, AP)")
    cutoff = int(m.group(2)) if m.group(2) else None
    if cutoff is not None and cutoff < 1:
        raise ConfigError(f"measure {text!r}: the cutoff must be at least 1")
    if family.cutoff == "required" and cutoff is None:
        raise ConfigError(f"measure {text!r} needs a cutoff, e.g. {family.name}@10")
    if family.cutoff == "none" and cutoff is not None:
        raise ConfigError(f"measure {family.name} takes no cutoff")
    return Measure(family, cutoff)


DEFAULT_MEASURES = tuple(
    parse_measure(name)
    for name in ("Success@1", "Success@3", "Success@10", "R@10", "P@5", "RR@10", "nDCG@10", "AP", "Abstain", "FalseAbstain",
                 "answer_rate", "refusal_rate", "citation_precision", "faithfulness", "judged_faithfulness")
)
MEASURES = FAMILIES
