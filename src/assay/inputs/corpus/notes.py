"""What a command says about how it read a corpus: one line per file that needed a decision (an encoding
that is not UTF-8, an empty file, a PDF glyph with no text), a count of the files not read by extension,
each of them with ``verbose``, and which libraries read PDF and DOCX files.

Lines about a file start with ``note:`` or ``warning:`` (printed even under --quiet); the rest is
informational."""

from __future__ import annotations

from collections import Counter

from assay.core.escape import terminal
from assay.inputs.corpus.documents import Corpus, Document
from assay.inputs.corpus.files import Skipped
from assay.inputs.corpus.text import BOM, DETECTED, GIVEN

SHOWN = 10  # files of one kind named before the rest are counted (all with verbose)
_EMPTY = {"html": "has no visible text", "pdf": "has no text layer (a scanned PDF? assay does not read images)",
          "docx": "has no text in its body"}


def _empty(doc: Document) -> str:
    return _EMPTY.get(doc.format or "", "is empty") if doc.byte_size else "is empty"


def label(s: Skipped) -> str:
    """The group a file not read is counted in: its extension, or why it was not considered at all."""
    if s.reason.startswith("hidden"):
        return "hidden"
    if s.reason.startswith("excluded"):
        return "excluded"
    if s.reason.startswith("matches no --include"):
        return "not included"
    if s.path.endswith("/"):
        return "directories"
    return s.extension or "no extension"


def by_extension(skipped) -> str:
    counts = Counter(label(s) for s in skipped)
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def notes(corpus: Corpus, verbose: bool = False) -> list[str]:
    """The lines to print after reading ``corpus``; ``verbose`` lists every file not read, and every file of a
    kind past the first ``SHOWN`` (files decoded, empty files, PDFs with glyphs that have no text)."""
    kinds: dict[str, list[str]] = {"empty": [], "unmapped": [], "decoded": []}  # warnings first
    for d in corpus.documents:
        path = corpus.root / d.doc_id
        if d.encoding_source == DETECTED:
            kinds["decoded"].append(f"note: {path}: not UTF-8; read as {d.encoding} (detected; --encoding NAME "
                                    "reads such files as NAME)")
        elif d.encoding_source == GIVEN:
            kinds["decoded"].append(f"note: {path}: not UTF-8; read as {d.encoding} (--encoding)")
        elif d.encoding_source == BOM:
            kinds["decoded"].append(f"note: {path}: read as {d.encoding.upper()}, as its byte order mark says")
        if d.empty:
            kinds["empty"].append(f"warning: {path} {_empty(d)}: kept (a retriever can return it), but no quote "
                                  "can resolve in it")
        if d.unmapped:
            kinds["unmapped"].append(f"warning: {path}: {d.unmapped} glyph(s) have no text in the PDF's fonts and "
                                     "read as (cid:N); no quote can match them")
    more = {"decoded": "file(s) not UTF-8, read as said above", "empty": "empty file(s), kept",
            "unmapped": "PDF(s) with glyphs that have no text"}
    lines = []
    for kind, said in kinds.items():
        if verbose or len(said) <= SHOWN:
            lines += said
        else:
            prefix = said[0].split(":", 1)[0]
            lines += said[:SHOWN] + [f"{prefix}: and {len(said) - SHOWN} more {more[kind]} (--verbose lists them)"]
    if corpus.skipped:
        dirs = sum(s.path.endswith("/") for s in corpus.skipped)
        files = len(corpus.skipped) - dirs
        what = " and ".join(f"{n} {word}{'s' if n > 1 else ''}" if word == "file" else
                            f"{n} director{'ies' if n > 1 else 'y'}"
                            for n, word in ((files, "file"), (dirs, "directory")) if n)
        lines.append(f"note: {what} under {corpus.root} not read: {by_extension(corpus.skipped)}"
                     + ("" if verbose else " (--verbose lists them)"))
        if verbose:
            lines += [f"  not read: {s.path}: {s.reason}" for s in corpus.skipped]
    extracted = [_extracted(corpus, fmt, name) for fmt, name in (("pdf", "PDF"), ("docx", "DOCX"))]
    if any(extracted):
        lines.append("read " + "; ".join(e for e in extracted if e))
    return [terminal(line) for line in lines]  # one line each, whatever a file's name holds


def _extracted(corpus: Corpus, fmt: str, name: str) -> str:
    docs = [d for d in corpus.documents if d.format == fmt]
    if not docs:
        return ""
    pages = f" ({sum(len(d.pages) for d in docs)} pages)" if fmt == "pdf" else ""
    library = corpus.readers.get(fmt, {}).get("library", "?")
    return f"{len(docs)} {name} file{'s' if len(docs) > 1 else ''}{pages} with {library}"
