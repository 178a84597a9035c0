"""Reading a corpus directory into documents: Markdown (.md, .markdown), plain text (.txt),
reStructuredText (.rst), HTML (.html, .htm) reduced to its visible text, PDF (.pdf, text per page) and
Word (.docx); files without an extension as plain text when asked (``extensionless``).

Every file not read is listed with its reason (``Corpus.skipped``; see ``assay.inputs.corpus.files``). Text
that is not UTF-8 is decoded with the encoding given or detected (``assay.inputs.corpus.text``), and each
document keeps how. An empty file (or an HTML page with no visible text, a PDF without a text layer) is
kept: it can be named in judgments and returned by a retriever, but no quote resolves in it.
``assay.inputs.corpus.notes`` says all of this in the lines a command prints.

The corpus hash (``assay.core.hashing.corpus_hash``) covers every file read, path and raw bytes, and the text
(with its pages) of every file whose text is more than its bytes decoded as UTF-8: a PDF or DOCX (made by a
library, recorded with its version in ``Corpus.readers``) or a file decoded with an encoding given or
detected. So the hash changes whenever such a text does, and only then. A corpus of UTF-8 text files keeps
the hash it always had.
"""

from __future__ import annotations

import contextvars
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from assay.core import progress
from assay.inputs.corpus.documents import Corpus, Document
from assay.inputs.corpus.files import EXTENSIONS, FORMATS, CorpusFile, Skipped, not_regular, scan
from assay.inputs.corpus.html import html_to_text
from assay.inputs.corpus.options import DEFAULT_MAX_FILE_MB, ReadOptions, from_config
from assay.core.errors import CorpusError
from assay.core.escape import terminal
from assay.core.hashing import corpus_hash, sha256_bytes

__all__ = ["Corpus", "Document", "ReadOptions", "Skipped", "CorpusFile", "EXTENSIONS", "FORMATS",
           "DEFAULT_MAX_FILE_MB", "corpus_files", "file_limit", "from_config", "html_to_text", "load_corpus",
           "reading", "scan", "text_digest"]
MB = 1_000_000


def corpus_files(root: Path) -> list[Path]:
    """Every file under root the corpus reads, as found (see ``scan``); problems are left out."""
    return [f.path for f in scan(root, _READING.get().options)[0]]


@dataclass(frozen=True)
class _Reading:
    options: ReadOptions = ReadOptions()
    say: object = None  # prints the lines of assay.inputs.corpus.notes after each load; None: nothing is said
    verbose: bool = False
    said: set = field(default_factory=set)  # corpus hashes already reported in this block


_READING: contextvars.ContextVar[_Reading] = contextvars.ContextVar("corpus_reading", default=_Reading())


@contextmanager
def reading(options: ReadOptions, say=None, verbose: bool = False):
    """Within the block, ``load_corpus`` called without options reads with these (for commands that load a
    corpus on a user's behalf deep inside: `assay run`, `assay judgments check`, ...), and, with ``say``,
    says how it read each corpus (``assay.inputs.corpus.notes``; ``verbose`` lists every file not read) once in
    the block, however often the same corpus is read (a sweep reads it once per point)."""
    token = _READING.set(_Reading(options, say, verbose))
    try:
        yield
    finally:
        _READING.reset(token)


@contextmanager
def file_limit(max_file_mb: float):
    """Within the block, ``load_corpus`` called without a limit uses this one (other options unchanged)."""
    current = _READING.get()
    token = _READING.set(replace(current, options=current.options.with_limit(max_file_mb)))
    try:
        yield
    finally:
        _READING.reset(token)


def _report(corpus: "Corpus") -> None:
    context = _READING.get()
    if context.say is None or corpus.corpus_hash in context.said:
        return
    context.said.add(corpus.corpus_hash)
    from assay.inputs.corpus.notes import notes

    for line in notes(corpus, context.verbose):
        context.say(line)


def _read(f: CorpusFile, limit: int) -> bytes:
    """The file's bytes, at most ``limit``; refuses anything that stopped being a regular file since the scan."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(f.real, flags)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise CorpusError(f"{f.path}: {not_regular(mode)}, not a regular file; only regular files are read")
        # read(limit + 1) would set aside the whole limit (50 MB) for every file, however small: ask for its size
        expected = min(os.fstat(fh.fileno()).st_size, limit) + 1
        data = fh.read(expected)
        if len(data) == expected and expected <= limit:  # it grew since: read on, up to the limit and one byte
            data += fh.read(limit + 1 - len(data))
        return data


def _too_big(f: CorpusFile, size: int, max_file_mb: float) -> str:
    return (f"{f.path}: {size / MB:,.1f} MB ({size:,} bytes), over the limit of {max_file_mb:g} MB per file; "
            "raise it with --max-file-mb (or max_file_mb in [run] of assay.toml)")


def require_readers(files) -> None:
    """Stop before reading anything when a file's format needs an extra that is not installed (PDF: pdf,
    DOCX: docx), naming the first such file."""
    from assay.core.extras import require

    for extra in ("pdf", "docx"):
        first = next((f for f in files if f.format == extra), None)
        if first is not None:
            require(extra, f"{terminal(first.path)} (a {extra.upper()} file)")


def load_corpus(root: str | os.PathLike, max_file_mb: float | None = None,
                options: ReadOptions | None = None) -> Corpus:
    """Read every corpus file under root (see ``assay.inputs.corpus.files.scan``) with ``options`` (default: those
    of ``reading``, else the defaults). Any file that cannot be read fails the whole load, naming every such
    file: nothing half-ingested. A file over ``max_file_mb`` megabytes (10**6 bytes; default the options',
    50) is such a problem, naming its size."""
    from assay.inputs.corpus.read import Unreadable, read_document

    options = (options or _READING.get().options).with_limit(max_file_mb)
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"{terminal(root)}: corpus directory not found")
    files, problems, skipped = scan(root, options)
    require_readers(files)
    if not files and not problems:
        raise CorpusError(f"{terminal(root)}: no {', '.join(EXTENSIONS)} files found" + _what_was_there(skipped))
    limit = int(options.max_file_mb * MB)
    documents, raw, readers, decoded, derived = [], [], {}, {}, {}
    with progress.task("reading corpus files", total=len(files), unit="files") as shown:
        for f in files:
            shown.advance()
            if f.size > limit:
                problems.append(_too_big(f, f.size, options.max_file_mb))
                continue
            try:
                data = _read(f, limit)
            except CorpusError as exc:
                problems.append(str(exc))
                continue
            except OSError as exc:
                problems.append(f"{f.path}: cannot be read ({exc.strerror or exc}); fix its permissions or remove it")
                continue
            if len(data) > limit:  # it grew since the scan
                problems.append(_too_big(f, len(data), options.max_file_mb))
                continue
            try:
                doc, reader = read_document(f, data, options)
            except Unreadable as exc:
                if exc.skip:
                    skipped.append(Skipped(f.rel, "", str(exc)))
                else:
                    problems.append(f"{f.path}: {exc}")
                continue
            if reader:
                readers[doc.format] = reader
            if doc.encoding_source in ("given", "detected"):
                decoded[doc.doc_id] = doc.encoding
            if reader or doc.encoding_source in ("given", "detected"):
                derived[doc.doc_id] = text_digest(doc)
            raw.append((f.rel, data))
            documents.append(doc)
    if problems:  # a problem is one line whatever a file's name holds: a newline in it cannot forge another
        raise CorpusError(f"{len(problems)} corpus file(s) cannot be ingested:\n  "
                          + "\n  ".join(terminal(p) for p in problems))
    if decoded:
        readers["decoded"] = decoded
    documents.sort(key=lambda d: d.doc_id.encode("utf-8"))
    skipped.sort(key=lambda s: s.path.encode("utf-8"))
    corpus = Corpus(root=root, corpus_hash=corpus_hash(raw, derived), documents=tuple(documents),
                    skipped=tuple(skipped), readers=readers)
    _report(corpus)
    return corpus


def text_digest(doc: Document) -> str:
    """SHA-256 of a document's text and page boundaries: what the corpus hash covers for a file whose text is
    more than its bytes decoded as UTF-8."""
    from assay.core.hashing import canonical_json

    return sha256_bytes(doc.text.encode("utf-8", "surrogatepass") + b"\0" + canonical_json(doc.pages).encode())


def _what_was_there(skipped: list[Skipped]) -> str:
    if not skipped:
        return ""
    shown = "; ".join(terminal(f"{s.path}: {s.reason}") for s in skipped[:5])
    more = f"; and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return f" (not read: {shown}{more})"
