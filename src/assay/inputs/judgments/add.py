"""`assay judgments add`: one question, or one more gold entry, written into a judgments file.

Nothing reaches the file unchecked: the file with the addition must parse, and the new gold
entry's quote must occur exactly once in its document (``resolve_gold``, as `assay run` resolves
it), or nothing is written. A new ``query_id`` is inserted where the order puts it; an existing one
gets the gold entry appended to its list (its question, form, hard class, unanswerable kind and notes
stay; only ``category`` may change, so a question that gains a second entry can become
``ambiguous``). Only the one line changes: every other line keeps its bytes, so a diff shows the
addition alone. The file is written atomically, and not at all if it changed meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import JudgmentsError, UsageError
from assay.inputs.judgments.fmt import canonical_line, records, write_if_unchanged
from assay.inputs.judgments.model import GoldEntry, Judgment, JudgmentSet
from assay.inputs.judgments.parse import BOM, decode, parse_judgments, read_file

# The option that gives each field on the command line (for messages and prompts).
OPTION = {"query_id": "--id", "question": "--question", "doc": "--doc", "quote": "--quote", "grade": "--grade",
          "category": "--category", "form": "--form", "hard_class": "--hard-class",
          "unanswerable": "--unanswerable", "notes": "--notes"}
# Fields of an existing question that --question etc. may repeat but not change.
_KEPT = {"question": "query", "form": "form", "hard_class": "hard_class", "unanswerable": "unanswerable",
         "notes": "notes"}


@dataclass
class Addition:
    query_id: str | None = None
    question: str | None = None
    doc: str | None = None
    quote: str | None = None
    grade: int | None = None
    category: str | None = None
    form: str | None = None
    hard_class: str | None = None
    unanswerable: str | None = None
    notes: str | None = None

    @property
    def no_answer(self) -> bool:
        return self.category == "no_answer" or (self.category is None and self.unanswerable is not None)


@dataclass(frozen=True)
class GoldenFile:
    """A judgments file as read before an addition (``data`` None: the file does not exist yet)."""

    path: Path
    data: bytes | None
    objects: dict  # query_id -> the line's JSON object
    lines: list  # the text split at "\n"; a line's index is its number minus 1
    index: dict  # query_id -> line index

    @classmethod
    def read(cls, path) -> GoldenFile:
        path = Path(path)
        if not path.exists():
            return cls(path, None, {}, [], {})
        data = read_file(path)
        parse_judgments(data, path)  # strictly: an addition goes into a file that parses
        text = decode(data, path)
        found = records(text)
        return cls(path, data, {obj["query_id"]: obj for _, obj in found}, text.split("\n"),
                   {obj["query_id"]: n - 1 for n, obj in found})


def missing(golden: GoldenFile, addition: Addition) -> list[str]:
    """The fields still needed, in the order to ask for them: an id; for a new question its text and form;
    a document and quote unless it has no answer."""
    if addition.query_id is None:
        return ["query_id"]
    need = []
    if addition.query_id not in golden.objects:
        need += [f for f in ("question", "form") if getattr(addition, f) is None]
    if not addition.no_answer or addition.query_id in golden.objects:
        need += [f for f in ("doc", "quote") if getattr(addition, f) is None]
    return need


@dataclass(frozen=True)
class Added:
    query_id: str
    line: int
    new_question: bool
    created_file: bool
    doc: str | None
    start: int | None
    end: int | None
    gold_entries: int


def _record(addition: Addition) -> dict:
    obj = {"query_id": addition.query_id, "query": addition.question,
           "category": addition.category or ("no_answer" if addition.no_answer else "normal"),
           "form": addition.form, "gold": []}
    for field in ("hard_class", "unanswerable", "notes"):
        if getattr(addition, field) is not None:
            obj[field] = getattr(addition, field)
    return obj


def _gold(addition: Addition) -> dict:
    entry = {"doc": addition.doc, "quote": addition.quote}
    if addition.grade is not None:
        entry["grade"] = addition.grade
    return entry


def add(golden: GoldenFile, corpus, addition: Addition) -> Added:
    """Write ``addition`` into the file ``golden`` was read from; ``corpus`` is the loaded corpus its quote must
    resolve in. Raises UsageError for a missing or conflicting field, JudgmentsError when the result would not
    parse or the quote does not resolve; then nothing is written."""
    need = missing(golden, addition)
    if need:
        raise UsageError(f"missing {', '.join(OPTION[f] for f in need)}")
    qid = addition.query_id
    lines = list(golden.lines) if golden.lines else []
    if lines and lines[-1] == "":
        lines.pop()  # the final newline, put back below
    existing = golden.objects.get(qid)
    if existing is not None:
        where = f"{golden.path}:{golden.index[qid] + 1} (query {qid})"
        for field, key in _KEPT.items():
            given, stored = getattr(addition, field), existing.get(key, "normal" if key == "hard_class" else None)
            if field == "question" and given is not None:  # the parser ignores the padding
                given, stored = given.strip(), stored.strip()
            if given is not None and given != stored:
                raise UsageError(f"{where}: {OPTION[field]} {given!r} differs from the question's {key} "
                                 f"{stored!r}; leave {OPTION[field]} out to add a gold entry to it, or use a new --id")
        obj = dict(existing)
        obj["gold"] = list(existing["gold"]) + [_gold(addition)]
        if addition.category is not None:
            obj["category"] = addition.category
        at = golden.index[qid]
        lines[at] = canonical_line(obj)
    else:
        obj = _record(addition)
        if addition.doc is not None or addition.quote is not None:
            obj["gold"].append(_gold(addition))
        after = [i for q, i in golden.index.items() if q > qid]
        at = min(after) if after else len(lines)
        lines.insert(at, canonical_line(obj))
    # a byte-order mark the file had stays: every line but the added one keeps its bytes
    text = BOM * bool(golden.data and golden.data.startswith(BOM.encode("utf-8"))) + "\n".join(lines) + "\n"
    try:
        parsed = parse_judgments(text.encode("utf-8"), golden.path)
    except JudgmentsError as exc:
        raise JudgmentsError(exc.problems, f"nothing written to {golden.path}: with this addition it would not "
                             "parse") from None
    judgment = next(j for j in parsed.judgments if j.query_id == qid)
    start = end = None
    doc = None
    if obj["gold"] and (existing is None or addition.doc is not None):
        entry = judgment.gold[-1]
        span = _resolve(golden.path, judgment, entry, corpus)
        doc, start, end = entry.doc, span.start, span.end
    write_if_unchanged(golden.path, golden.data, text)
    return Added(qid, at + 1, existing is None, golden.data is None, doc, start, end, len(judgment.gold))


def _resolve(path: Path, judgment: Judgment, entry: GoldEntry, corpus):
    """The new entry's span, resolved exactly as a run resolves it."""
    from dataclasses import replace

    from assay.inputs.judgments.resolve import resolve_gold

    alone = JudgmentSet(path, "", (replace(judgment, gold=(entry,)),))
    try:
        span, = resolve_gold(alone, corpus)
    except JudgmentsError as exc:
        raise JudgmentsError(exc.problems, f"nothing written to {path}: the new gold entry does not resolve") from None
    return span
