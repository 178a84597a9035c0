"""`assay judgments fmt`: one layout for every judgments file, so a diff shows content, never order or spacing.

The layout: lines sorted by ``query_id`` (Python string order: by code point; the parser takes any
order, so sorting is for the diff), one JSON object per line with its keys in the README's order
(``FIELD_ORDER``; gold entries ``doc``, ``quote``, ``grade``), ``", "`` and ``": "`` between items,
text as UTF-8 rather than ``\\u`` escapes (control characters and lone surrogates stay escaped: they
cannot be written raw), no blank lines, ``\\n`` line ends, a final newline and no byte-order mark.
Leading and trailing whitespace of ``query`` and ``quote`` is dropped, as the parser drops it; every
other value is kept as written (a left-out ``category`` or ``form`` stays left out).

Formatting never changes what the file means: the formatted text must parse to the same judgments
(line numbers aside) before anything is written. The bundled demo set is in this layout already.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from assay.core.errors import AssayError, JudgmentsError, NotFormatted
from assay.inputs.judgments.model import JudgmentSet
from assay.inputs.judgments.parse import BOM, decode, parse_judgments, read_file

FIELD_ORDER = ("query_id", "query", "category", "form", "hard_class", "gold", "unanswerable", "notes", "review")
GOLD_ORDER = ("doc", "quote", "grade")
_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_line(obj: dict) -> str:
    """One judgment object (as the parser accepts it) in the file's layout, without the line end."""
    record = {key: obj[key] for key in FIELD_ORDER if key in obj}
    record["query"] = record["query"].strip()
    gold = []
    for entry in record["gold"]:
        entry = {key: entry[key] for key in GOLD_ORDER if key in entry}
        if "quote" in entry:
            entry["quote"] = entry["quote"].strip()
        gold.append(entry)
    record["gold"] = gold
    text = json.dumps(record, ensure_ascii=False)
    # A lone surrogate (from a "\ud800" escape) has no UTF-8 form: it stays an escape.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def records(text: str) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line of a text the parser accepted."""
    return [(n, json.loads(line)) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


@dataclass(frozen=True)
class Formatted:
    """A judgments file and the same file formatted. ``judgments`` is the original's parse (its line numbers)."""

    path: Path
    original: bytes
    text: str
    judgments: JudgmentSet
    moved: int  # questions whose place in the order changes
    relaid: int  # lines whose text changes (beyond moving)
    blank: int  # blank lines dropped
    crlf: int  # lines ending "\r\n"
    unterminated: bool  # the last line has no "\n"
    bom: bool = False  # the file starts with a UTF-8 byte-order mark (the parser skips it; fmt drops it)

    @property
    def changed(self) -> bool:
        return self.original != self.text.encode("utf-8")

    def summary(self) -> str:
        parts = []
        if self.moved:
            parts.append(f"{self.moved} question{'s' * (self.moved != 1)} out of query_id order")
        if self.relaid:
            parts.append(f"{self.relaid} line{'s' * (self.relaid != 1)} laid out differently")
        if self.blank:
            parts.append(f"{self.blank} blank line{'s' * (self.blank != 1)}")
        if self.crlf:
            parts.append(f"{self.crlf} \\r\\n line end{'s' * (self.crlf != 1)}")
        if self.unterminated:
            parts.append("no newline at the end")
        if self.bom:
            parts.append("a byte-order mark")
        return ", ".join(parts) or "nothing"

    def diff(self) -> str:
        """A unified diff from the file to its formatted text, each line escaped for a terminal (a "\\r" line
        end shows as the two characters; so would a bidirectional control inside a string; a byte-order mark shows
        as ``\\ufeff``)."""
        from assay.core.escape import terminal

        original = self.original.decode("utf-8")
        if original.startswith(BOM):  # invisible on a terminal, so the line would seem unchanged
            original = "\\ufeff" + original[1:]
        before, after = _lines(original), _lines(self.text)
        lines = difflib.unified_diff(before, after, f"{self.path}", f"{self.path} (formatted)", lineterm="")
        return "".join(terminal(line) + "\n" for line in lines)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")  # as the parser splits: a U+2028 inside a string is no line end
    return lines[:-1] if lines[-1] == "" else lines


def _moved(qids: list[str]) -> int:
    """How many questions leave their place: those outside one longest already-sorted run (an LIS)."""
    import bisect

    tails: list[str] = []
    for q in qids:
        i = bisect.bisect_left(tails, q)
        tails[i:i + 1] = [q]
    return len(qids) - len(tails)


def format_judgments(data: bytes, path) -> Formatted:
    """The formatted text of a judgments file's bytes. Raises JudgmentsError when the file does not parse."""
    path = Path(path)
    original = parse_judgments(data, path)
    text = decode(data, path)
    found = records(text)
    lines = text.split("\n")
    ordered = sorted(found, key=lambda item: item[1]["query_id"])
    out = [canonical_line(obj) for _, obj in ordered]
    formatted = "\n".join(out) + "\n"
    again = parse_judgments(formatted.encode("utf-8"), path)
    if _meaning(again) != _meaning(original):
        raise AssayError(f"{path}: formatting would change what the file says; nothing written "
                         "(a bug in assay judgments fmt: please report it with the file)")
    relaid = sum(1 for n, obj in found if lines[n - 1].rstrip("\r") != canonical_line(obj))
    return Formatted(
        path=path, original=data, text=formatted, judgments=original,
        moved=_moved([obj["query_id"] for _, obj in found]), relaid=relaid,
        blank=sum(1 for line in _lines(text) if not line.strip()),
        crlf=sum(1 for line in _lines(text) if line.endswith("\r")),
        unterminated=not text.endswith("\n"), bom=data.decode("utf-8").startswith(BOM),
    )


def _meaning(judgments: JudgmentSet) -> list:
    return sorted((replace(j, line=0) for j in judgments.judgments), key=lambda j: j.query_id)


def read(path) -> bytes:
    return read_file(path)


def fmt(path, check: bool = False, corpus=None) -> tuple[Formatted, list | None]:
    """Format a judgments file in place (unless ``check``); return what changed, and the gold spans when a
    loaded ``corpus`` is given.

    Everything is checked before anything is written: the file parses (order aside) and, with
    ``corpus``, every quote resolves exactly once (errors cite the file as it is). ``check`` writes
    nothing and raises NotFormatted, with the diff, when the file is not in the layout.
    """
    path = Path(path)
    data = read(path)
    formatted = format_judgments(data, path)
    spans = None
    if corpus is not None:
        from assay.inputs.judgments.resolve import resolve_gold

        spans = resolve_gold(formatted.judgments, corpus)
    if formatted.changed:
        if check:
            raise NotFormatted(f"{path} is not formatted ({formatted.summary()}); run: assay judgments fmt {path}",
                               formatted.diff(), path)
        write_if_unchanged(path, data, formatted.text)
    return formatted, spans


def write_if_unchanged(path, read_before: bytes, text: str) -> None:
    """``write_atomic``, unless the file no longer holds ``read_before`` (someone saved it meanwhile)."""
    path = Path(path)
    now = path.read_bytes() if path.exists() else None
    if now != read_before:
        raise AssayError(f"{path} changed while assay was working on it; nothing written, run the command again")
    write_atomic(path, text)


def write_atomic(path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` (through a symlink, to its target) by writing a new file beside
    it and renaming it over: a reader sees the old file or the new one, never half of one. An existing
    file's permission bits are kept."""
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
