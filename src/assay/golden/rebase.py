"""`assay judgments rebase`: carry a golden set from one version of a corpus to the next.

Every gold entry must resolve against the old corpus (that is the state being carried; one
JudgmentsError lists every entry that does not). Each is then classified against the new one:

- ``unchanged``: same document, and the quote resolves exactly once at the same span (a
  whole-document entry: the document still exists);
- ``moved``: the same quote resolves exactly once at another place of its document; or, when it
  no longer occurs in its document (or the document is gone), exactly once in exactly one other
  document that was added or changed; or, for a whole-document entry, its text is now under
  exactly one new path (a rename);
- ``edited``: the quote no longer resolves, and the passage of the new text nearest to it (its
  own document first, then the added or changed ones) has a similarity of at least the
  threshold: that passage, widened to whole words and resolving exactly once, is proposed as the
  new quote. A quote that now occurs several times in its document is edited too: lengthened
  word by word around the occurrence whose surroundings match the old ones best, until it
  resolves once;
- ``gone``: its document was deleted and nothing replaces it, or nothing is near enough.

Only added or changed documents are searched for a quote that left its document: a paragraph
that moved landed in a document that changed. Quotes match through ``resolve.find_quote``, the
matcher a run uses.

The proposed file keeps every line of an untouched question byte for byte. A question with a
changed entry is written again (its keys in their order) with a ``review`` field saying what
changed and what the entry was; gone entries leave its gold list (the review keeps them). A
question left with fewer gold entries than its category needs is left out of the proposal and
listed in the report. The original file is never written to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.inputs.corpus import Corpus, Document
from assay.core.errors import AssayError, CorpusError, JudgmentsError
from assay.inputs.judgments.model import JudgmentSet
from assay.inputs.judgments.parse import decode, load_judgments, parse_judgments
from assay.inputs.judgments.resolve import find_quote, resolve_gold

CLASSES = ("unchanged", "moved", "edited", "gone")
DEFAULT_THRESHOLD = 0.8
CONTEXT = 80  # characters either side of a span compared to pick among several occurrences
HINT = 0.6  # a gone entry names the nearest passage of another document from this similarity up
MAX_GROW = 40  # words added either side of a quote that occurs several times, at most
MIN_GOLD = {"normal": 1, "adversarial": 1, "ambiguous": 2, "no_answer": 0}
_HASH = re.compile(r"[0-9a-f]{8,64}")


@dataclass(frozen=True)
class Outcome:
    """What became of one gold entry."""

    query_id: str
    gold_idx: int
    line: int
    kind: str  # one of CLASSES
    doc: str
    quote: str | None
    new_doc: str | None = None  # None when gone
    new_quote: str | None = None
    similarity: float | None = None  # edited: of the old quote and the passage proposed
    detail: str = ""

    @property
    def changes_entry(self) -> bool:
        """The proposed file differs for this entry (a move within its document changes nothing)."""
        return self.kind == "gone" or (self.new_doc, self.new_quote) != (self.doc, self.quote)

    def as_dict(self) -> dict:
        return {"query_id": self.query_id, "gold_idx": self.gold_idx, "line": self.line, "class": self.kind,
                "doc": self.doc, "quote": self.quote, "new_doc": self.new_doc, "new_quote": self.new_quote,
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "detail": self.detail}


@dataclass
class Rebase:
    judgments: JudgmentSet
    old: Corpus
    new: Corpus
    threshold: float
    outcomes: list[Outcome]
    proposed: bytes = b""
    dropped: list[dict] = field(default_factory=list)  # questions left out of the proposal: query_id, line, why

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(1 for o in self.outcomes if o.kind == k) for k in CLASSES}

    @property
    def needs_review(self) -> bool:
        """The proposal differs from the file: an entry moved to another document, was edited or is gone."""
        return any(o.changes_entry for o in self.outcomes)

    def report(self, out: Path | None = None) -> dict:
        return {"judgments": str(self.judgments.path), "judgments_hash": self.judgments.sha256,
                "from": {"corpus": str(self.old.root), "corpus_hash": self.old.corpus_hash},
                "to": {"corpus": str(self.new.root), "corpus_hash": self.new.corpus_hash},
                "threshold": self.threshold, "counts": self.counts, "needs_review": self.needs_review,
                "proposed": None if out is None else str(out), "dropped_questions": self.dropped,
                "entries": [o.as_dict() for o in self.outcomes]}


# -- the corpora ------------------------------------------------------------------------------

def open_corpus(ref, get_wh, option: str) -> Corpus:
    """A corpus directory, a stored ``@NAME``, or a stored corpus by its hash (8 or more hex digits, as
    `assay runs` and every run line print it: the corpus a directory held before it changed)."""
    from assay.inputs.corpus import load_corpus
    from assay.store.collections import corpus_by_prefix, is_ref, stored_corpus

    text = str(ref)
    if is_ref(text):
        return stored_corpus(get_wh(), text)
    path = Path(text)
    if path.is_dir():
        return load_corpus(path)
    if _HASH.fullmatch(text):
        return corpus_by_prefix(get_wh(), text)
    raise CorpusError(f"{option} {text}: not a corpus directory, an @NAME or a stored corpus hash "
                      "(8 or more hex digits: `assay runs` lists the corpus of each run)")


# -- classification ---------------------------------------------------------------------------

def classify(judgments: JudgmentSet, old: Corpus, new: Corpus, threshold: float = DEFAULT_THRESHOLD) -> list[Outcome]:
    """Every gold entry's outcome, in file order. Raises JudgmentsError when an entry does not resolve in ``old``."""
    try:
        spans = {(g.query_id, g.gold_idx): g for g in resolve_gold(judgments, old)}
    except JudgmentsError as exc:
        raise JudgmentsError(exc.problems, f"{len(exc.problems)} gold entr{'y' if len(exc.problems) == 1 else 'ies'} "
                                           f"do not resolve against the old corpus {old.root}; a rebase carries a "
                                           "golden set that resolves (fix them there first)") from None
    old_docs, new_docs = old.by_id(), new.by_id()
    changed = [d for d in new.documents if d.doc_id not in old_docs or old_docs[d.doc_id].text != d.text]
    out = []
    for j in judgments.judgments:
        for idx, entry in enumerate(j.gold):
            base = {"query_id": j.query_id, "gold_idx": idx, "line": j.line, "doc": entry.doc, "quote": entry.quote}
            span = spans[(j.query_id, idx)]
            if entry.quote is None:
                out.append(_whole_document(base, old_docs[entry.doc], new_docs, old_docs, changed))
            else:
                out.append(_quoted(base, old_docs[entry.doc], span, new_docs.get(entry.doc), changed, threshold))
    return out


def _whole_document(base: dict, old_doc: Document, new_docs, old_docs, changed) -> Outcome:
    if old_doc.doc_id in new_docs:
        return Outcome(**base, kind="unchanged", new_doc=old_doc.doc_id)
    renamed = [d.doc_id for d in changed if d.doc_id not in old_docs and d.text == old_doc.text]
    if len(renamed) == 1:
        return Outcome(**base, kind="moved", new_doc=renamed[0], detail="renamed: the same text")
    return Outcome(**base, kind="gone", detail="document deleted")


def _quoted(base: dict, old_doc: Document, span, doc: Document | None, changed, threshold: float) -> Outcome:
    quote = base["quote"]
    if doc is not None:
        found = find_quote(doc.text, quote, doc.doc_id)
        if len(found) == 1:
            (start, end), = found
            if (start, end) == (span.start, span.end):
                return Outcome(**base, kind="unchanged", new_doc=doc.doc_id, new_quote=quote)
            return Outcome(**base, kind="moved", new_doc=doc.doc_id, new_quote=quote,
                           detail=f"within its document: characters {span.start}-{span.end} -> {start}-{end}")
        if found:
            best = max(found, key=lambda s: _context_similarity(old_doc.text, span, doc.text, s))
            longer = _unique_quote(doc.text, *best, doc_id=doc.doc_id)
            if longer is None:
                return Outcome(**base, kind="gone",
                               detail=f"the quote now occurs {len(found)} times in {doc.doc_id}, and no passage "
                                      f"up to {MAX_GROW} words longer occurs once; choose one by hand")
            return Outcome(**base, kind="edited", new_doc=doc.doc_id, new_quote=longer, similarity=1.0,
                           detail=f"the quote now occurs {len(found)} times; lengthened to resolve once")
    elsewhere = [(d, f) for d in changed if d.doc_id != base["doc"] for f in [find_quote(d.text, quote, d.doc_id)] if f]
    if len(elsewhere) == 1 and len(elsewhere[0][1]) == 1:
        target = elsewhere[0][0].doc_id
        why = "document deleted" if doc is None else "no longer in its document"
        return Outcome(**base, kind="moved", new_doc=target, new_quote=quote, detail=f"{why}; the quote occurs once there")
    own = _nearest_in(doc, quote) if doc is not None else None
    best = own if own is not None and own[1][0] >= threshold else \
        max((n for n in (_nearest_in(d, quote) for d in changed if d.doc_id != base["doc"]) if n is not None),
            key=lambda n: n[1][0], default=None)
    if best is not None and best[1][0] >= threshold:
        d, (similarity, start, end) = best
        proposal = _proposal(d.text, start, end, d.doc_id)
        if proposal is not None:
            where = "" if d.doc_id == base["doc"] else f" in {d.doc_id}"
            return Outcome(**base, kind="edited", new_doc=d.doc_id, new_quote=proposal, similarity=similarity,
                           detail=f"similarity {similarity:.2f}{where}")
    if elsewhere:
        places = ", ".join(f"{d.doc_id} ({len(f)}x)" for d, f in elsewhere[:5])
        return Outcome(**base, kind="gone", detail=f"the quote is in several documents: {places}; choose one by hand")
    what = "document deleted" if doc is None else "quote no longer found"
    hint = own if own is not None else best if best is not None and best[1][0] >= HINT else None
    if hint is None:
        return Outcome(**base, kind="gone", detail=what)
    d, (similarity, start, end) = hint
    snippet = " ".join(d.text[start:end].split())
    snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
    return Outcome(**base, kind="gone", similarity=similarity,
                   detail=f"{what}; nearest passage (in {d.doc_id}, similarity {similarity:.2f}, below "
                          f"{threshold:g}): {snippet!r}")


def _nearest_in(doc: Document, quote: str) -> tuple[Document, tuple[float, int, int]] | None:
    near = nearest_passage(doc.text, quote, doc.doc_id)
    return None if near is None else (doc, near)


def _context_similarity(old_text: str, span, new_text: str, found: tuple[int, int]) -> float:
    from rapidfuzz import fuzz

    before = lambda t, s: t[max(0, s - CONTEXT):s]  # noqa: E731
    after = lambda t, e: t[e:e + CONTEXT]  # noqa: E731
    return (fuzz.ratio(before(old_text, span.start), before(new_text, found[0]))
            + fuzz.ratio(after(old_text, span.end), after(new_text, found[1])))


_WORD = re.compile(r"\w")


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The span grown to whole words and trimmed of the blanks at its edges."""
    while 0 < start < len(text) and _WORD.match(text[start - 1]) and _WORD.match(text[start]):
        start -= 1
    while 0 < end < len(text) and _WORD.match(text[end - 1]) and _WORD.match(text[end]):
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _as_quote(text: str, start: int, end: int, doc_id: str | None = None) -> str | None:
    """The passage as a quote that resolves exactly once, there: its blanks collapsed when that still resolves
    (a quote's blanks match any run of blanks), else as written; None when neither does."""
    raw = text[start:end]
    for quote in (" ".join(raw.split()), raw):
        found = find_quote(text, quote, doc_id) if quote.strip() else []
        if len(found) == 1 and found[0][0] < end and found[0][1] > start:
            return quote
    return None


def _unique_quote(text: str, start: int, end: int, doc_id: str | None = None) -> str | None:
    """The passage at [start, end), grown a word at a time (after, then before) until it resolves once."""
    for _ in range(MAX_GROW):
        quote = _as_quote(text, start, end, doc_id)
        if quote is not None:
            return quote
        grown_end = re.search(r"\S+", text[end:])
        grown_start = re.search(r"\S+\s*$", text[:start])
        if grown_end is None and grown_start is None:
            return None
        if grown_end is not None:
            end += grown_end.end()
        if grown_start is not None:
            start = grown_start.start()
    return None


def _proposal(text: str, start: int, end: int, doc_id: str | None = None) -> str | None:
    start, end = _widen(text, start, end)
    if start >= end:
        return None
    return _unique_quote(text, start, end, doc_id)


def nearest_passage(text: str, quote: str, doc_id: str | None = None) -> tuple[float, int, int] | None:
    """(similarity in 0..1, start, end) of the passage of ``text`` nearest to ``quote`` (the passage a failed
    quote's error names), or None."""
    from assay.inputs.judgments.nearest import nearest_passage as nearest

    near = nearest(text, quote, doc_id)
    return None if near is None else (near.similarity, near.start, near.end)


# -- the proposal -----------------------------------------------------------------------------

def _review_text(outcomes: list[Outcome], new: Corpus) -> str:
    parts = []
    for o in outcomes:
        if o.kind == "gone":
            was = o.doc if o.quote is None else f"{o.doc} {o.quote!r}"
            parts.append(f"gold[{o.gold_idx}] gone ({o.detail}), was {was}")
        elif o.kind == "moved":
            parts.append(f"gold[{o.gold_idx}] moved from {o.doc} to {o.new_doc}")
        elif o.kind == "edited":
            where = "" if o.new_doc == o.doc else f", now in {o.new_doc}"
            parts.append(f"gold[{o.gold_idx}] edited ({o.detail}{where}), was {o.quote!r}")
    return f"rebase to corpus {new.corpus_hash[:12]}: " + "; ".join(parts)


def propose(data: bytes, judgments: JudgmentSet, outcomes: list[Outcome], new: Corpus) -> tuple[bytes, list[dict]]:
    """The proposed file's bytes, and the questions left out of it (too few gold entries left)."""
    lines = decode(data, judgments.path).split("\n")  # a byte-order mark the file had is not proposed
    by_query: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_query.setdefault(o.query_id, []).append(o)
    dropped = []
    for j in judgments.judgments:
        mine = by_query.get(j.query_id, [])
        if not any(o.changes_entry for o in mine):
            continue
        raw = lines[j.line - 1]
        ending = "\r" if raw.endswith("\r") else ""
        obj = json.loads(raw)
        gold, seen = [], set()
        for o, item in zip(mine, obj["gold"]):
            if o.kind == "gone":
                continue
            item = dict(item)
            item["doc"] = o.new_doc
            if o.new_quote is not None:
                item["quote"] = o.new_quote
            key = (o.new_doc, o.new_quote)
            if key in seen:  # two entries now name one passage: keep the first
                continue
            seen.add(key)
            gold.append(item)
        needed = MIN_GOLD.get(j.category, 1)
        if len(gold) < needed:
            article = "an" if j.category[0] in "aeiou" else "a"
            why = "every gold entry is gone" if not gold else \
                f"{article} {j.category} question needs {needed} gold entries, {len(gold)} left"
            dropped.append({"query_id": j.query_id, "line": j.line, "why": why})
            lines[j.line - 1] = None
            continue
        obj["gold"] = gold
        review = _review_text(mine, new)
        obj["review"] = f"{obj['review']}; {review}" if obj.get("review") else review
        lines[j.line - 1] = json.dumps(obj, ensure_ascii=False) + ending
    return "\n".join(line for line in lines if line is not None).encode("utf-8"), dropped


def rebase(judgments_path, old: Corpus, new: Corpus, threshold: float = DEFAULT_THRESHOLD) -> Rebase:
    """Classify every gold entry of the file at ``judgments_path`` and build the proposed file.

    The proposal is checked before it is returned: it parses, and every entry in it resolves
    exactly once against ``new``.
    """
    judgments = load_judgments(judgments_path)
    data = Path(judgments_path).read_bytes()
    outcomes = classify(judgments, old, new, threshold)
    proposed, dropped = propose(data, judgments, outcomes, new)
    result = Rebase(judgments, old, new, threshold, outcomes, proposed, dropped)
    if len(dropped) < len(judgments.judgments):
        try:
            resolve_gold(parse_judgments(proposed, Path(judgments_path)), new)
        except JudgmentsError as exc:  # a proposal that does not hold is a bug here, never the user's
            raise AssayError("the proposed judgments do not resolve against the new corpus (a bug in "
                             f"assay judgments rebase; please report it): {exc}") from None
    return result


def default_out(judgments_path) -> Path:
    """FILE.jsonl -> FILE.rebased.jsonl, beside it."""
    path = Path(judgments_path)
    stem = path.name[:-len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(stem + ".rebased.jsonl")


def write_proposal(result: Rebase, out: Path, force: bool = False) -> int:
    """Write the proposed file atomically; never over the judgments file itself, nor over another file unless
    ``force``. Returns its size in bytes."""
    from assay.core.files import write

    original = Path(result.judgments.path)
    if out.exists() and original.exists() and out.resolve() == original.resolve():
        raise AssayError(f"--out {out} is the judgments file itself; rebase never edits it: write the proposal "
                         "elsewhere and replace the file once it is reviewed")
    if out.exists() and not force:
        raise AssayError(f"{out} already exists; give --force to replace it, or another --out")
    if not result.proposed.strip():
        raise AssayError(f"every question of {original} lost its gold entries; nothing to propose "
                         "(the report lists each entry)")
    try:
        return write(out, result.proposed.decode("utf-8"))
    except OSError as exc:
        raise AssayError(f"cannot write {out}: {exc.strerror or exc}; check that its directory exists "
                         "and is writable") from None


def _short(text: str | None, n: int = 50) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[:n - 3] + "..."


def render(result: Rebase) -> str:
    """The report as text: a heading, every entry that is not unchanged, the counts per class."""
    from assay.core.escape import terminal
    from assay.core.tables import render as table

    j, old, new = result.judgments, result.old, result.new
    counts = result.counts
    out = [terminal(f"{j.path}: {len(result.outcomes)} gold entries of {len(j.judgments)} questions, from "
                    f"{old.root} (corpus {old.corpus_hash[:12]}) to {new.root} (corpus {new.corpus_hash[:12]})")]
    rows = []
    for o in result.outcomes:
        if o.kind == "unchanged":
            continue
        detail = o.detail
        if o.kind == "edited":
            detail += f": {_short(o.new_quote)!r}"
        rows.append([o.query_id, o.gold_idx, o.kind, o.doc, o.new_doc or "-", detail])
    if rows:
        out.append(table(["query_id", "gold", "class", "document", "now in", "detail"], rows,
                         align=["left", "right", "left", "left", "left", "left"]))
    out.append(", ".join(f"{k} {v}" for k, v in counts.items())
               + (" (unchanged entries are not listed; --format json lists every entry)" if counts["unchanged"] else ""))
    for d in result.dropped:
        out.append(terminal(f"left out of the proposal: {d['query_id']} (line {d['line']}): {d['why']}"))
    return "\n".join(out) + "\n"
