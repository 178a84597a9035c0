"""Reading a corpus directory into documents: one row per .md/.txt/.rst/.html file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from assay.errors import CorpusError
from assay.hashing import corpus_hash, sha256_bytes

EXTENSIONS = (".md", ".txt", ".rst", ".html")

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
    """Every ingestible file under root, skipping hidden files and directories."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name.lower().endswith(EXTENSIONS):
                found.append(Path(dirpath) / name)
    return found


def load_corpus(root: str | os.PathLike) -> Corpus:
    """Read every corpus file under root. Any bad file fails the whole load: nothing half-ingested."""
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"{root}: corpus directory not found")
    paths = corpus_files(root)
    if not paths:
        raise CorpusError(f"{root}: no {', '.join(EXTENSIONS)} files found")
    documents, raw, problems = [], [], []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.append(f"{path}: cannot be read ({exc.strerror or exc}); fix its permissions or remove it")
            continue
        try:
            text = _decode(path, rel, data)
        except CorpusError as exc:
            problems.append(str(exc))
            continue
        raw.append((rel, data))
        documents.append(Document(rel, text, len(data), sha256_bytes(data)))
    if problems:
        raise CorpusError(f"{len(problems)} corpus file(s) cannot be ingested:\n  " + "\n  ".join(problems))
    documents.sort(key=lambda d: d.doc_id.encode("utf-8"))
    return Corpus(root=root, corpus_hash=corpus_hash(raw), documents=tuple(documents))
