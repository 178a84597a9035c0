"""Reading a corpus directory into documents: one row per .md/.txt/.rst/.html file.

The loader stays inside the corpus root (links out are refused), reads only regular files (never
a FIFO or a device), each at most ``max_file_mb`` megabytes; see ``scan``.
"""

from __future__ import annotations

import contextvars
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from assay import progress
from assay.errors import CorpusError
from assay.hashing import corpus_hash, sha256_bytes

EXTENSIONS = (".md", ".txt", ".rst", ".html")
MB = 1_000_000
DEFAULT_MAX_FILE_MB = 50.0  # per file: a corpus of prose needs less; anything larger is raised with --max-file-mb

# Tags whose start or end breaks a line when HTML is reduced to text.
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
    "tfoot", "th", "thead", "title", "tr", "ul",
}
# Tags whose content is not text a reader sees.
_SKIP_TAGS = {"script", "style", "head", "noscript", "template"}


@dataclass(frozen=True)
class Document:
    doc_id: str  # corpus-relative path, forward slashes
    text: str
    byte_size: int
    sha256: str


@dataclass(frozen=True)
class Corpus:
    root: Path
    corpus_hash: str
    documents: tuple[Document, ...]

    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP_TAGS:
            self._skip_depth += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in _SKIP_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self._skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML page: block tags break lines, inline tags vanish, entities unescaped.

    Whitespace inside a line collapses to one space and runs of blank lines to one
    blank line, so quotes written against what a browser shows resolve.
    """
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    # convert_charrefs already unescaped entities once; unescaping again would turn a
    # displayed "&lt;" (written "&amp;lt;") into "<".
    raw = "".join(parser.parts)
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    paragraphs = "\n".join(out)
    return paragraphs + "\n" if paragraphs else ""


def _decode(path: Path, rel: str, data: bytes) -> str:
    if not data.strip():
        raise CorpusError(f"{path}: file is empty; remove it or give it content")
    if b"\0" in data:
        raise CorpusError(f"{path}: looks binary (contains NUL bytes); only text files can be ingested")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{path}: not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():  # a BOM or non-ASCII whitespace alone is still empty
        raise CorpusError(f"{path}: file is empty; remove it or give it content")
    if rel.lower().endswith(".html"):
        text = html_to_text(text)
        if not text.strip():
            raise CorpusError(f"{path}: HTML has no visible text; remove it or give it content")
    return text


def corpus_files(root: Path) -> list[Path]:
    """Every ingestible file under root, as the corpus names it (see ``scan``); problems are left out."""
    return [f.path for f in scan(root)[0]]


@dataclass(frozen=True)
class CorpusFile:
    rel: str  # the document id: the path under the root, forward slashes
    path: Path  # as found under the root (a link's own path when reached through a link)
    real: str  # what is read: the resolved path, inside the root
    size: int


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def scan(root: Path) -> tuple[list[CorpusFile], list[str]]:
    """The files to read under root, and the problems found, without opening any file.

    Hidden files and directories are skipped. A symbolic link is followed only when what it points
    to lies inside the root (resolved, so ``..`` cannot escape); one pointing outside is a problem
    naming the link and its target. Everything is read once, by its real path: a directory or file
    that is also reached without a link is read there, a link to it is skipped, and a directory
    already walked is never walked again, so a cycle of directory links ends. Only regular files are
    read: a FIFO, socket or device with a corpus name is a problem, found with stat, never opened.
    """
    root = Path(root)
    root_real = os.path.realpath(root)
    inside = lambda p: p == root_real or p.startswith(root_real.rstrip(os.sep) + os.sep)  # noqa: E731
    found: list[tuple[bool, CorpusFile]] = []  # (reached through a link, file)
    problems: list[str] = []
    walked: set[str] = set()
    dir_links: list[tuple[Path, str, str]] = []

    def walk(directory: Path, prefix: str, through_link: bool) -> None:
        real_dir = os.path.realpath(directory)
        if real_dir in walked:
            return
        walked.add(real_dir)
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{directory}: cannot be listed ({exc.strerror or exc}); fix its permissions")
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path, rel = Path(entry.path), prefix + entry.name
            wanted = entry.name.lower().endswith(EXTENSIONS)
            linked = through_link
            if entry.is_symlink():
                target = os.path.realpath(path)
                if not inside(target):
                    if wanted or os.path.isdir(target):
                        problems.append(f"{path}: a symbolic link to {target}, outside the corpus root "
                                        f"{root_real}; refused: copy what it points to into the corpus")
                    continue
                try:
                    st = os.stat(target)
                except OSError as exc:
                    if wanted:
                        problems.append(f"{path}: cannot be read ({exc.strerror or exc}: a link to {target}); "
                                        "fix the link or remove it")
                    continue
                if stat.S_ISDIR(st.st_mode):
                    dir_links.append((path, rel, target))
                    continue
                linked = True
            else:
                if entry.is_dir(follow_symlinks=False):
                    walk(path, rel + "/", through_link)
                    continue
                target = os.path.realpath(path)
                try:
                    st = os.lstat(path)
                except OSError as exc:
                    if wanted:
                        problems.append(f"{path}: cannot be read ({exc.strerror or exc}); fix its permissions")
                    continue
            if not wanted:
                continue
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{path}: {_not_regular(st.st_mode)}, not a regular file; only regular files "
                                "are read: remove it or rename it")
                continue
            found.append((linked, CorpusFile(rel, path, target, st.st_size)))

    walk(root, "", False)
    while dir_links:  # after every real directory: a directory is read under its own path when it can be
        links, dir_links[:] = sorted(dir_links, key=lambda d: d[1].encode("utf-8")), []
        for path, rel, target in links:
            if target not in walked:
                walk(path, rel + "/", True)
    files, seen = [], set()
    for _, f in sorted(found, key=lambda pair: (pair[0], pair[1].rel.encode("utf-8"))):
        if f.real not in seen:
            seen.add(f.real)
            files.append(f)
    files.sort(key=lambda f: f.rel.encode("utf-8"))
    return files, problems


def _read(f: CorpusFile, limit: int) -> bytes:
    """The file's bytes, at most ``limit``; refuses anything that stopped being a regular file since the scan."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(f.real, flags)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise CorpusError(f"{f.path}: {_not_regular(mode)}, not a regular file; only regular files are read")
        return fh.read(limit + 1)


def _too_big(f: CorpusFile, size: int, max_file_mb: float) -> str:
    return (f"{f.path}: {size / MB:,.1f} MB ({size:,} bytes), over the limit of {max_file_mb:g} MB per file; "
            "raise it with --max-file-mb (or max_file_mb in [run] of assay.toml)")


_LIMIT: contextvars.ContextVar[float] = contextvars.ContextVar("max_file_mb", default=DEFAULT_MAX_FILE_MB)


@contextmanager
def file_limit(max_file_mb: float):
    """Within the block, ``load_corpus`` called without a limit uses this one (for callers that load a
    corpus on a command's behalf, like `assay judgments check`)."""
    token = _LIMIT.set(max_file_mb)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def load_corpus(root: str | os.PathLike, max_file_mb: float | None = None) -> Corpus:
    """Read every corpus file under root (see ``scan``). Any bad file fails the whole load: nothing
    half-ingested. A file over ``max_file_mb`` megabytes (10**6 bytes; default 50, or ``file_limit``'s)
    is a problem naming its size."""
    max_file_mb = _LIMIT.get() if max_file_mb is None else max_file_mb
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"{root}: corpus directory not found")
    files, problems = scan(root)
    if not files and not problems:
        raise CorpusError(f"{root}: no {', '.join(EXTENSIONS)} files found")
    limit = int(max_file_mb * MB)
    documents, raw = [], []
    with progress.task("reading corpus files", total=len(files), unit="files") as shown:
        for f in files:
            shown.advance()
            if f.size > limit:
                problems.append(_too_big(f, f.size, max_file_mb))
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
                problems.append(_too_big(f, len(data), max_file_mb))
                continue
            try:
                text = _decode(f.path, f.rel, data)
            except CorpusError as exc:
                problems.append(str(exc))
                continue
            raw.append((f.rel, data))
            documents.append(Document(f.rel, text, len(data), sha256_bytes(data)))
    if problems:
        raise CorpusError(f"{len(problems)} corpus file(s) cannot be ingested:\n  " + "\n  ".join(problems))
    documents.sort(key=lambda d: d.doc_id.encode("utf-8"))
    return Corpus(root=root, corpus_hash=corpus_hash(raw), documents=tuple(documents))
