"""Which files of a corpus directory are read, and why each other one is not.

The loader stays inside the corpus root (links out are refused), reads only regular files (never a FIFO or
a device), and lists every file it does not read with the reason (``Skipped``): a format it does not read,
no extension, a hidden name, an ``--exclude`` glob, no ``--include`` glob. See ``scan``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from assay.inputs.corpus.options import ReadOptions

# extension -> format (documents.format); files without an extension read as "text" when asked
FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "rst", ".html": "html",
           ".htm": "html", ".pdf": "pdf", ".docx": "docx"}
EXTENSIONS = tuple(FORMATS)
TEXT = "text"
# formats a user may expect to be read, with what to do instead
_CONVERT = {
    ".doc": "a Word 97-2003 file: assay reads .docx; save it as .docx",
    ".odt": "an OpenDocument text: save it as .docx or PDF",
    ".rtf": "rich text: save it as .docx or PDF",
    ".pages": "an Apple Pages file: export it as .docx or PDF",
    ".epub": "an e-book: convert it to HTML or PDF",
    ".pptx": "a PowerPoint deck: export it as PDF",
    ".xlsx": "a spreadsheet: not prose; export the text it holds as .txt or .md",
}


@dataclass(frozen=True)
class CorpusFile:
    rel: str  # the document id: the path under the root, forward slashes
    path: Path  # as found under the root (a link's own path when reached through a link)
    real: str  # what is read: the resolved path, inside the root
    size: int
    format: str  # a value of FORMATS, or TEXT for a file without an extension


@dataclass(frozen=True)
class Skipped:
    path: str  # under the root, forward slashes; a directory ends with "/"
    extension: str  # lower-case, with its dot; "" when none (or a directory)
    reason: str


def extension(name: str) -> str:
    """The lower-cased last extension of a file name ("" when none; a leading dot starts no extension)."""
    stem = name.lstrip(".")
    return "." + stem.rsplit(".", 1)[1].lower() if "." in stem else ""


def _reason(ext: str) -> str:
    if not ext:
        return "no extension: --extensionless reads such files as plain text"
    return _CONVERT.get(ext) or f"not a format assay reads (it reads {', '.join(EXTENSIONS)})"


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def not_regular(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def scan(root: Path, options: ReadOptions | None = None) -> tuple[list[CorpusFile], list[str], list[Skipped]]:
    """The files to read under root, the problems found, and the files not read, without opening any file.

    Hidden files and directories (names starting with a dot) are not read; each is listed once (a hidden
    directory as itself, not walked). A directory an ``exclude`` glob matches is listed once and not walked.
    A symbolic link is followed only when what it points to lies inside the root (resolved, so ``..``
    cannot escape); one pointing outside is a problem naming the link and its target. Everything is read
    once, by its real path: a directory or file that is also reached without a link is read there, a link
    to it is skipped, and a directory already walked is never walked again, so a cycle of directory links
    ends. Only regular files are read: a FIFO, socket or device with a corpus name is a problem, found with
    stat, never opened.
    """
    options = options or ReadOptions()
    root = Path(root)
    root_real = os.path.realpath(root)
    inside = lambda p: p == root_real or p.startswith(root_real.rstrip(os.sep) + os.sep)  # noqa: E731
    found: list[tuple[bool, CorpusFile]] = []  # (reached through a link, file)
    problems: list[str] = []
    skipped: dict[str, Skipped] = {}
    walked: set[str] = set()
    dir_links: list[tuple[Path, str, str]] = []

    def skip(rel: str, ext: str, reason: str) -> None:
        skipped.setdefault(rel, Skipped(rel, ext, reason))

    def chosen(rel: str, name: str, is_dir: bool) -> str | None:
        """The format a file is read as, or None after listing why it is not read."""
        glob = options.excluded_by(rel)
        if glob is not None:
            skip(rel + "/" if is_dir else rel, "" if is_dir else extension(name),
                 f"excluded by the glob {glob.pattern!r}")
            return None
        if is_dir:
            return "dir"
        ext = extension(name)
        fmt = FORMATS.get(ext) or (TEXT if not ext and options.extensionless else None)
        if fmt is None:
            skip(rel, ext, _reason(ext))
            return None
        if options.not_included(rel):
            skip(rel, ext, "matches no --include glob (" + ", ".join(repr(g.pattern) for g in options.include) + ")")
            return None
        return fmt

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
            path, rel = Path(entry.path), prefix + entry.name
            if entry.name.startswith("."):
                is_dir = entry.is_dir(follow_symlinks=False)
                skip(rel + "/" if is_dir else rel, "" if is_dir else extension(entry.name),
                     "hidden (the name starts with a dot)")
                continue
            linked = through_link
            if entry.is_symlink():
                target = os.path.realpath(path)
                is_dir = os.path.isdir(target)
                fmt = chosen(rel, entry.name, is_dir)
                if not inside(target):
                    if fmt is not None:
                        problems.append(f"{path}: a symbolic link to {target}, outside the corpus root "
                                        f"{root_real}; refused: copy what it points to into the corpus")
                    continue
                if fmt is None:
                    continue
                try:
                    st = os.stat(target)
                except OSError as exc:
                    problems.append(f"{path}: cannot be read ({exc.strerror or exc}: a link to {target}); "
                                    "fix the link or remove it")
                    continue
                if stat.S_ISDIR(st.st_mode):
                    dir_links.append((path, rel, target))
                    continue
                linked = True
            else:
                is_dir = entry.is_dir(follow_symlinks=False)
                fmt = chosen(rel, entry.name, is_dir)
                if fmt is None:
                    continue
                if is_dir:
                    walk(path, rel + "/", through_link)
                    continue
                target = os.path.realpath(path)
                try:
                    st = os.lstat(path)
                except OSError as exc:
                    problems.append(f"{path}: cannot be read ({exc.strerror or exc}); fix its permissions")
                    continue
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{path}: {not_regular(st.st_mode)}, not a regular file; only regular files "
                                "are read: remove it or rename it")
                continue
            found.append((linked, CorpusFile(rel, path, target, st.st_size, fmt)))

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
    return files, problems, sorted(skipped.values(), key=lambda s: s.path.encode("utf-8"))
