"""The judgment records, as parsed from JSONL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.inputs.judgments.vocabulary import CATEGORIES, FORMS, UNANSWERABLE, UNLABELED  # noqa: F401 (part of the model)


@dataclass(frozen=True)
class GoldEntry:
    doc: str
    quote: str | None  # None: the whole document is relevant
    grade: int


@dataclass(frozen=True)
class Judgment:
    query_id: str
    query: str
    category: str
    form: str
    hard_class: str
    gold: tuple[GoldEntry, ...]
    unanswerable: str | None
    notes: str | None
    line: int
    review: str | None = None  # set on a draft nobody has checked yet (assay judgments draft); lint warns

    @property
    def answerable(self) -> bool:
        return self.category != "no_answer"


@dataclass(frozen=True)
class JudgmentSet:
    path: Path
    sha256: str  # of the file's raw bytes: the judgments hash every run records
    judgments: tuple[Judgment, ...]


@dataclass(frozen=True)
class GoldSpan:
    """A gold entry resolved against one corpus: a character span of a document."""

    query_id: str
    gold_idx: int  # position of the entry in the judgment's gold list
    doc_id: str
    quote: str | None
    grade: int
    start: int
    end: int

    @property
    def whole_doc(self) -> bool:
        return self.quote is None
