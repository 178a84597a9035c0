"""Strict parsing of a judgments JSONL file. Every problem is reported with file and line, all at once.

Strict about what a line says, forgiving about what a person writing the file by hand gets wrong
without changing its meaning: ``category`` and ``form`` may be left out (the question is then
``unlabeled``, :data:`UNLABELED`), lines may come in any order (`assay judgments fmt` sorts them), and
a UTF-8 byte-order mark before the first line is skipped. A file that is not JSONL at all (a JSON
array, pretty-printed objects, CSV or YAML) gets one message saying what the file must be, with the
exact conversion where there is one, instead of an error on every line.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from pathlib import Path, PurePosixPath

from assay.core.errors import JudgmentsError
from assay.core.hashing import sha256_bytes
from assay.core.limits import JUDGMENTS_LINE_CHARS, QUESTION_CHARS
from assay.inputs.judgments.model import CATEGORIES, FORMS, UNANSWERABLE, UNLABELED, GoldEntry, Judgment, JudgmentSet

REQUIRED = ("query_id", "query", "gold")
OPTIONAL = ("category", "form", "hard_class", "unanswerable", "notes", "review")
FIELDS = ("query_id", "query", "category", "form", "hard_class", "gold", "unanswerable", "notes", "review")
GOLD_FIELDS = ("doc", "quote", "grade")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
BOM = "\ufeff"
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jl")
# One line of a golden set, the smallest a person writes: shown wherever a file turns out not to be JSONL.
EXAMPLE = ('{"query_id": "q-refund", "query": "How long do refunds take?", '
           '"gold": [{"doc": "returns.md", "quote": "Refunds are issued within 14 days"}]}')
WHAT_IT_IS = "a golden set is JSONL: one JSON object per line, one line per question"
# Names people give a field by habit, and what the file calls it (a typo is caught by its closeness instead).
_ALIASES = {"id": "query_id", "qid": "query_id", "question_id": "query_id", "queryid": "query_id",
            "question": "query", "text": "query", "query_text": "query", "docs": "gold", "documents": "gold",
            "relevant": "gold", "answers": "gold", "labels": "gold"}
_INSIDE_GOLD = ("doc", "document", "quote", "passage", "grade")


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
        problems.append(f"{where}: 'gold' must be a list of entries like {{\"doc\": \"file.md\", \"quote\": "
                        "\"...\"} ([] when the corpus holds no answer)")
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
            problems.append(f"{at}: missing 'doc' (the document's path, relative to the corpus directory)")
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
            problems.append(f"{where}: gold entry {e.doc!r} {e.quote!r} is listed twice; keep one")
        seen.add((e.doc, e.quote))
    return entries


def _unknown_fields(unknown: list[str]) -> str:
    """``unknown field(s) ...; allowed: ...``, and for each field a person plausibly meant another by, that one."""
    hints = []
    for name in unknown:
        if name.lower() in _INSIDE_GOLD:
            hints.append(f"{name!r} belongs in a gold entry: \"gold\": [{{\"doc\": ..., \"quote\": ...}}]")
            continue
        meant = _ALIASES.get(name.lower()) or next(iter(difflib.get_close_matches(name, FIELDS, 1, 0.75)), None)
        if meant is not None and meant != name:
            hints.append(f"{name!r}: write {meant!r}")
    said = f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(FIELDS)}"
    return said + (f" ({'; '.join(hints)})" if hints else "")


def _parse_record(obj: dict, where: str, lineno: int, problems: list[str]) -> Judgment | None:
    before = len(problems)
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        problems.append(f"{where}: {_unknown_fields(unknown)}")
    missing = [f for f in REQUIRED if f not in obj]
    if missing:
        problems.append(f"{where}: missing field(s) {', '.join(missing)} (every question needs query_id, query and "
                        "gold; category and form are optional)")
        return None
    qid = obj["query_id"]
    if not isinstance(qid, str) or not _ID.fullmatch(qid):  # fullmatch: '$' alone lets a trailing newline through
        problems.append(f"{where}: query_id {qid!r} must be a string of letters, digits and . _ : / -")
        return None
    where = f"{where} (query {qid})"
    for field in ("query", "hard_class", "notes", "review"):
        if field in obj and (not isinstance(obj[field], str) or not obj[field].strip()):
            problems.append(f"{where}: {field!r} must be a non-empty string")
    if isinstance(obj["query"], str) and len(obj["query"]) > QUESTION_CHARS:
        problems.append(f"{where}: the query is {len(obj['query']):,} characters, over the limit of "
                        f"{QUESTION_CHARS:,} for one question; ask it in fewer words")
    # a question that says neither is unlabeled; one that writes the word says the same
    category, form = obj.get("category", UNLABELED), obj.get("form", UNLABELED)
    if category not in CATEGORIES + (UNLABELED,):
        problems.append(f"{where}: category {category!r} is not one of {', '.join(CATEGORIES)} (or leave it out: "
                        f"the question is then {UNLABELED})")
    if form not in FORMS + (UNLABELED,):
        problems.append(f"{where}: form {form!r} is not one of {', '.join(FORMS)} (or leave it out: the question "
                        f"is then {UNLABELED})")
    gold = _parse_gold(obj["gold"], where, problems)
    unanswerable = obj.get("unanswerable")
    if unanswerable is not None:
        if category != "no_answer":
            problems.append(f"{where}: 'unanswerable' is only allowed on no_answer questions (set \"category\": "
                            "\"no_answer\", or drop it)")
        elif unanswerable not in UNANSWERABLE:
            problems.append(f"{where}: unanswerable {unanswerable!r} is not one of {', '.join(UNANSWERABLE)}")
    if isinstance(obj["gold"], list):
        n = len(obj["gold"])
        if category == "no_answer" and n:
            problems.append(f"{where}: a no_answer question must have an empty gold list (or another category, "
                            "when the corpus answers it)")
        elif category in ("normal", "adversarial", UNLABELED) and n == 0:
            article = "an" if category[0] in "aeiou" else "a"
            problems.append(f"{where}: {article} {category} question needs at least one gold entry (or category "
                            "no_answer, when the corpus holds no answer to it)")
        elif category == "ambiguous" and n < 2:
            problems.append(f"{where}: an ambiguous question needs at least two gold entries, one per reading (or "
                            "category normal)")
    if len(problems) > before:
        return None
    return Judgment(
        query_id=qid, query=obj["query"].strip(), category=category, form=form,
        hard_class=obj.get("hard_class", "normal"), gold=tuple(gold), unanswerable=unanswerable,
        notes=obj.get("notes"), line=lineno, review=obj.get("review"),
    )


def decode(data: bytes, path) -> str:
    """The text of a judgments file's bytes: UTF-8, without the byte-order mark an editor may put first
    (line numbers are unchanged: the mark is no line). Raises JudgmentsError for any other encoding."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise JudgmentsError([f"{path}: UTF-16 (it starts with a UTF-16 byte-order mark); re-save it as UTF-8"],
                             f"cannot read {path}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JudgmentsError([f"{path}: not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"]
                             + _named_otherwise(Path(path))) from None
    return text[1:] if text.startswith(BOM) else text


def parse_judgments(data: bytes, path: Path) -> JudgmentSet:
    """The judgments in ``data`` (the bytes of the file at ``path``), or one JudgmentsError listing every problem.

    Lines may come in any order (duplicate ids are still errors); `assay judgments fmt` sorts them.
    """
    path = Path(path)
    problems: list[str] = []
    text = decode(data, path)
    judgments: list[Judgment] = []
    seen: dict[str, int] = {}
    objects = 0  # lines that are JSON objects, right or wrong: none at all means the file is not JSONL
    too_long = False
    # JSONL lines end at "\n" only: splitlines() would also break inside a JSON string
    # holding U+2028, U+0085 or a form feed, and miscount every line after it.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        if len(line) > JUDGMENTS_LINE_CHARS:  # refused unread: what it holds is no question
            too_long = True
            problems.append(f"{where}: the line is {len(line):,} characters, over the limit of "
                            f"{JUDGMENTS_LINE_CHARS:,} for one judgments line (one question and its quotes); "
                            "was a document pasted into it?")
            continue
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
        objects += 1
        qid = obj.get("query_id")
        if isinstance(qid, str):
            if qid in seen:
                problems.append(f"{where}: duplicate query_id {qid!r} (first on line {seen[qid]}); give each question "
                                "an id of its own")
            seen.setdefault(qid, lineno)
        record = _parse_record(obj, where, lineno, problems)
        if record is not None:
            judgments.append(record)
    if not judgments and not problems:
        problems.append(f"{path}: no judgments found; {WHAT_IT_IS}, like: {EXAMPLE}")
    if problems:
        raise (None if too_long else _not_jsonl(text, path, objects)) or JudgmentsError(
            _named_otherwise(path) + problems, f"{len(problems)} problem(s) in {path}")
    return JudgmentSet(path=path, sha256=sha256_bytes(data), judgments=tuple(judgments))


def _named_otherwise(path: Path) -> list[str]:
    """A first line for the problems of a file whose name says it holds something else than JSONL."""
    if not path.suffix or path.suffix.lower() in JSONL_SUFFIXES:
        return []
    return [f"{path}: named {path.suffix}, but {WHAT_IT_IS} (name it .jsonl), like: {EXAMPLE}"]


def _json_values(text: str) -> list[tuple[object, int, int]] | None:
    """Each JSON value of a text that is one or more of them, whatever their layout, with the lines it spans
    (first, last); None when the text does not read that way."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at == len(text):
            return values
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        first = text.count("\n", 0, at) + 1
        values.append((value, first, first + text.count("\n", at, end)))
        at = end


def _converted_name(path: Path) -> Path:
    """Where the offered conversion writes: FILE.jsonl beside FILE, never FILE itself nor a file already there
    (the command is meant to be pasted as it is)."""
    candidates = [path.with_suffix(".jsonl"), path.with_name(f"{path.stem}.lines.jsonl")]
    candidates += [path.with_name(f"{path.stem}.lines-{n}.jsonl") for n in range(2, 100)]
    return next((c for c in candidates if c != path and not c.exists()), candidates[-1])


def _not_jsonl(text: str, path: Path, objects: int) -> JudgmentsError | None:
    """One error saying what the file must be, for a file that is not JSONL at all: a JSON array, JSON objects
    spread over several lines, or no line a JSON object (CSV, YAML, prose). None for a JSONL file with errors."""
    src, dst = shlex.quote(str(path)), shlex.quote(str(_converted_name(path)))
    values = _json_values(text) if text.lstrip()[:1] in ("[", "{") else None
    if values and len(values) == 1 and isinstance(values[0][0], list):
        items = values[0][0]
        first = next((item for item in items if isinstance(item, dict)), None)
        lines = [f"{path}: {WHAT_IT_IS}, with no [ ] around the objects and no commas between them; "
                 + ("its first item as a line:" if first is not None else "a line looks like:"),
                 json.dumps(first, ensure_ascii=False) if first is not None else EXAMPLE]
        if items and all(isinstance(item, dict) for item in items):
            lines += [f"convert it with: jq -c '.[]' {src} > {dst}",
                      "or, without jq: python -c \"import json, sys; [print(json.dumps(q, ensure_ascii=False)) for q "
                      f"in json.load(sys.stdin)]\" < {src} > {dst}"]
        noun = f"{len(items)} item{'s' * (len(items) != 1)}"
        return JudgmentsError(lines, f"{path} is a JSON array of {noun}, not JSONL")
    if values and all(isinstance(v, dict) for v, _, _ in values) and any(a != b for _, a, b in values):
        spread = next((a, b) for _, a, b in values if a != b)
        noun = f"{len(values)} JSON object{'s' * (len(values) != 1)}"
        return JudgmentsError([
            f"{path}: {WHAT_IT_IS}; this file has {noun} laid out over several lines (one on lines "
            f"{spread[0]}-{spread[1]})",
            f"convert it with: jq -c . {src} > {dst}"], f"{path} is not JSONL")
    lines = [(n, line.strip()) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if objects or not lines:
        return None
    n, reads = lines[0]
    reads = reads if len(reads) <= 60 else reads[:57] + "..."
    kind = {".csv": "CSV", ".tsv": "TSV", ".yaml": "YAML", ".yml": "YAML"}.get(path.suffix.lower())
    return JudgmentsError([
        f"{path}: no line is a JSON object{f' (it looks like {kind})' if kind else ''}; line {n} reads {reads!r}",
        f"{WHAT_IT_IS}, like: {EXAMPLE}"], f"{path} is not JSONL")


def read_file(path) -> bytes:
    """The bytes of a judgments file; a path that is missing, or is not a regular file (a directory, a FIFO,
    /dev/zero), is a JudgmentsError saying which, without opening it."""
    import os
    import stat

    from assay.inputs.corpus.files import not_regular

    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise JudgmentsError([f"{path}: judgments file not found"], "cannot read judgments") from None
    except OSError as exc:
        raise JudgmentsError([f"{path}: cannot be read ({exc.strerror or exc})"], "cannot read judgments") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else not_regular(mode)
        raise JudgmentsError([f"{path}: {kind}, not a regular file; give the judgments JSONL file"],
                             "cannot read judgments")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise JudgmentsError([f"{path}: cannot be read ({exc.strerror or exc})"], "cannot read judgments") from None


def load_judgments(path) -> JudgmentSet:
    path = Path(path)
    return parse_judgments(read_file(path), path)
