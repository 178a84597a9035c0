"""Strict parsing of a judgments JSONL file. Every problem is reported with file and line, all at once."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

from assay.errors import JudgmentsError
from assay.hashing import sha256_bytes
from assay.judgments.model import CATEGORIES, FORMS, UNANSWERABLE, GoldEntry, Judgment, JudgmentSet

REQUIRED = ("query_id", "query", "category", "form", "gold")
OPTIONAL = ("hard_class", "unanswerable", "notes", "review")
GOLD_FIELDS = ("doc", "quote", "grade")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")


def valid_query_id(value) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None  # fullmatch: '$' lets a trailing newline through


def _check_doc_path(doc) -> str | None:
    """The problem with a gold document path, or None when it is a clean corpus-relative path."""
    if not isinstance(doc, str) or not doc.strip():
        return "'doc' must be a non-empty string"
    if "\\" in doc:
        return f"doc {doc!r} uses backslashes; write corpus-relative paths with forward slashes"
    if doc.startswith("/") or re.match(r"^[A-Za-z]:", doc):
        return f"doc {doc!r} is absolute; write it relative to the corpus directory"
    parts = PurePosixPath(doc).parts
    if ".." in parts:
        return f"doc {doc!r} contains '..'; write it relative to the corpus directory"
    if "." in doc.split("/") or "" in doc.split("/"):
        return f"doc {doc!r} is not normalized; write it like 'dir/file.md'"
    return None


def _parse_gold(raw, where: str, problems: list[str]) -> list[GoldEntry]:
    if not isinstance(raw, list):
        problems.append(f"{where}: 'gold' must be a list")
        return []
    entries = []
    for i, item in enumerate(raw):
        at = f"{where} gold[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{at}: must be an object like {{\"doc\": ..., \"quote\": ...}}")
            continue
        unknown = sorted(set(item) - set(GOLD_FIELDS))
        if unknown:
            problems.append(f"{at}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(GOLD_FIELDS)}")
        if "doc" not in item:
            problems.append(f"{at}: missing 'doc'")
            continue
        bad = _check_doc_path(item["doc"])
        if bad:
            problems.append(f"{at}: {bad}")
            continue
        quote = item.get("quote")
        if "quote" in item and (not isinstance(quote, str) or not quote.strip()):
            problems.append(f"{at}: 'quote' must be a non-empty string (omit it to judge the whole document)")
            continue
        grade = item.get("grade", 1)
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            problems.append(f"{at}: 'grade' must be an integer of at least 1, got {grade!r}")
            continue
        entries.append(GoldEntry(item["doc"], quote.strip() if quote else None, grade))
    seen = set()
    for e in entries:
        if (e.doc, e.quote) in seen:
            problems.append(f"{where}: gold entry {e.doc!r} {e.quote!r} is listed twice")
        seen.add((e.doc, e.quote))
    return entries


def _parse_record(obj: dict, where: str, lineno: int, problems: list[str]) -> Judgment | None:
    before = len(problems)
    unknown = sorted(set(obj) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(REQUIRED + OPTIONAL)}")
    missing = [f for f in REQUIRED if f not in obj]
    if missing:
        problems.append(f"{where}: missing field(s) {', '.join(missing)}")
        return None
    qid = obj["query_id"]
    if not isinstance(qid, str) or not _ID.fullmatch(qid):  # fullmatch: '$' alone lets a trailing newline through
        problems.append(f"{where}: query_id {qid!r} must be a string of letters, digits and . _ : / -")
        return None
    where = f"{where} (query {qid})"
    for field in ("query", "hard_class", "notes", "review"):
        if field in obj and (not isinstance(obj[field], str) or not obj[field].strip()):
            problems.append(f"{where}: {field!r} must be a non-empty string")
    category, form = obj["category"], obj["form"]
    if category not in CATEGORIES:
        problems.append(f"{where}: category {category!r} is not one of {', '.join(CATEGORIES)}")
    if form not in FORMS:
        problems.append(f"{where}: form {form!r} is not one of {', '.join(FORMS)}")
    gold = _parse_gold(obj["gold"], where, problems)
    unanswerable = obj.get("unanswerable")
    if unanswerable is not None:
        if category != "no_answer":
            problems.append(f"{where}: 'unanswerable' is only allowed on no_answer questions")
        elif unanswerable not in UNANSWERABLE:
            problems.append(f"{where}: unanswerable {unanswerable!r} is not one of {', '.join(UNANSWERABLE)}")
    if isinstance(obj["gold"], list):
        n = len(obj["gold"])
        if category == "no_answer" and n:
            problems.append(f"{where}: a no_answer question must have an empty gold list")
        elif category in ("normal", "adversarial") and n == 0:
            problems.append(f"{where}: a {category} question needs at least one gold entry (or category no_answer)")
        elif category == "ambiguous" and n < 2:
            problems.append(f"{where}: an ambiguous question needs at least two gold entries")
    if len(problems) > before:
        return None
    return Judgment(
        query_id=qid, query=obj["query"].strip(), category=category, form=form,
        hard_class=obj.get("hard_class", "normal"), gold=tuple(gold), unanswerable=unanswerable,
        notes=obj.get("notes"), line=lineno, review=obj.get("review"),
    )


def parse_judgments(data: bytes, path: Path, *, ordered: bool = True) -> JudgmentSet:
    """The judgments in ``data`` (the bytes of the file at ``path``), or one JudgmentsError listing every problem.

    ``ordered=False`` lets ids out of order through (duplicates are still errors): `assay judgments fmt`
    reads a file that way before sorting it.
    """
    problems: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JudgmentsError([f"{path}: not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"]) from None
    judgments: list[Judgment] = []
    seen: dict[str, int] = {}
    previous: str | None = None
    # JSONL lines end at "\n" only: splitlines() would also break inside a JSON string
    # holding U+2028, U+0085 or a form feed, and miscount every line after it.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except (ValueError, RecursionError) as exc:  # an integer of over 4300 digits; nesting past the stack
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
            problems.append(f"{where}: not valid JSON for judgments ({why}); write one flat object per line")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{where}: each line must be a JSON object")
            continue
        qid = obj.get("query_id")
        if isinstance(qid, str):
            if qid in seen:
                problems.append(f"{where}: duplicate query_id {qid!r} (first on line {seen[qid]})")
            elif ordered and previous is not None and qid < previous:
                problems.append(f"{where}: query_id {qid!r} is out of order (after {previous!r}); keep the file "
                                f"sorted by query_id (assay judgments fmt {path} sorts it)")
            seen.setdefault(qid, lineno)
            previous = max(previous or qid, qid)
        record = _parse_record(obj, where, lineno, problems)
        if record is not None:
            judgments.append(record)
    if not judgments and not problems:
        problems.append(f"{path}: no judgments found")
    if problems:
        raise JudgmentsError(problems, f"{len(problems)} problem(s) in {path}")
    return JudgmentSet(path=path, sha256=sha256_bytes(data), judgments=tuple(judgments))


def load_judgments(path) -> JudgmentSet:
    path = Path(path)
    if not path.is_file():
        raise JudgmentsError([f"{path}: judgments file not found"], "cannot read judgments")
    return parse_judgments(path.read_bytes(), path)
