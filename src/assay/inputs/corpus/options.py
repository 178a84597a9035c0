"""How a corpus directory is read: which files (``include`` / ``exclude`` globs, files without an
extension), how text that is not UTF-8 is decoded (``encoding``), and the largest file read.

The same settings come from the command line (``--include``, ``--exclude``, ``--encoding``,
``--extensionless``) and from ``[corpus]`` in assay.toml; a flag given on the command line replaces the
file's value (a list of globs replaces the file's list, it does not add to it). The bounds on one file
(``--max-file-mb``, and for a PDF or DOCX ``--max-expanded-mb`` and ``--read-timeout``:
assay.inputs.corpus.budget) come from the command line or ``[run]``.

Globs are matched against a file's path under the corpus root, with forward slashes (its document id):

- ``*`` matches any characters but ``/``, ``?`` one character but ``/``, ``[abc]`` one of a set, and
  ``**`` any characters including ``/`` (``**/`` may also match nothing: ``docs/**/*.md`` matches
  ``docs/a.md``);
- a glob without ``/`` (but perhaps a trailing one) matches a name at any depth (``*.pdf``, ``drafts``);
  one with a ``/`` elsewhere, or starting ``./``, is anchored at the root (``/drafts``, ``docs/*.md``);
- a glob that matches a directory matches everything under it (``archive``, ``docs/old``), so an
  excluded directory is not walked at all.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace

from assay.core.errors import ConfigError
from assay.inputs.settings import RUN_READING

DEFAULT_MAX_FILE_MB = 50.0  # per file: a corpus of prose needs less; anything larger is raised with --max-file-mb
# what one PDF or DOCX may unpack to and take to read: a 1,500-page PDF decodes to about 100 MB and reads in
# minutes; a decompression bomb stops here instead of at the machine's memory
DEFAULT_MAX_EXPANDED_MB = RUN_READING["max_expanded_mb"]
DEFAULT_READ_TIMEOUT_S = RUN_READING["read_timeout_s"]
CONFIG_KEYS = ("include", "exclude", "encoding", "extensionless")


@dataclass(frozen=True)
class Glob:
    pattern: str
    regex: re.Pattern = field(compare=False, repr=False)

    @classmethod
    def parse(cls, pattern: str, where: str = "--include/--exclude") -> "Glob":
        if not isinstance(pattern, str) or not pattern.strip("/ "):
            prefix = f"{where}: " if where else ""
            raise ConfigError(f"{prefix}{pattern!r} is not a glob; give one like '*.pdf' or 'docs/**'")
        return cls(pattern, re.compile(_translate(pattern)))

    def matches(self, rel: str) -> bool:
        return self.regex.fullmatch(rel) is not None


def _translate(pattern: str) -> str:
    """The regular expression of a glob (see the module docstring): a path, or a path under a match."""
    body = pattern.strip()
    anchored = body.startswith("./") or "/" in body.rstrip("/")  # only a trailing / leaves a name free to float
    while body.startswith("./"):
        body = body[2:]
    body = body.strip("/")
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = body.find("]", i + 2 if body[i + 1:i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            inner = body[i + 1:end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    anywhere = "" if anchored else "(?:.*/)?"
    return anywhere + "".join(out) + "(?:/.*)?"


@dataclass(frozen=True)
class ReadOptions:
    """How ``assay.inputs.corpus.load_corpus`` reads a directory (see the module docstring)."""

    include: tuple[Glob, ...] = ()
    exclude: tuple[Glob, ...] = ()
    encoding: str | None = None  # for files that are not UTF-8; None: detect it
    extensionless: bool = False  # read files without an extension as plain text
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    max_expanded_mb: float = DEFAULT_MAX_EXPANDED_MB
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S

    def budget(self):
        """A fresh budget for one PDF or DOCX (assay.inputs.corpus.budget)."""
        from assay.inputs.corpus.budget import ReadBudget

        return ReadBudget(self.max_expanded_mb, self.read_timeout_s)

    @classmethod
    def make(cls, include=(), exclude=(), encoding=None, extensionless=False, max_file_mb=DEFAULT_MAX_FILE_MB,
             where: str = "") -> "ReadOptions":
        """Options from plain values (glob strings, an encoding name), checked; ``where`` prefixes messages."""
        prefix = f"{where} " if where else ""
        globs = {}
        for key, value in (("include", include), ("exclude", exclude)):
            if isinstance(value, str):
                value = (value,)
            if not isinstance(value, (list, tuple)):
                raise ConfigError(f"{prefix}{key} must be a list of globs, not {value!r}")
            globs[key] = tuple(Glob.parse(p, f"{prefix}{key}") for p in value)
        if not isinstance(extensionless, bool):
            raise ConfigError(f"{prefix}extensionless must be true or false, not {extensionless!r}")
        return cls(globs["include"], globs["exclude"], check_encoding(encoding, prefix), extensionless,
                   max_file_mb)

    def excluded_by(self, rel: str) -> Glob | None:
        return next((g for g in self.exclude if g.matches(rel)), None)

    def not_included(self, rel: str) -> bool:
        return bool(self.include) and not any(g.matches(rel) for g in self.include)

    def with_limit(self, max_file_mb: float | None) -> "ReadOptions":
        return self if max_file_mb is None else replace(self, max_file_mb=max_file_mb)


def check_encoding(name, prefix: str = "") -> str | None:
    """``name`` as Python's codec registry spells it, or None; an unknown encoding is a ConfigError."""
    if name is None:
        return None
    try:
        info = codecs.lookup(str(name))
    except LookupError:
        raise ConfigError(f"{prefix}unknown encoding {name!r}; give a name Python knows, e.g. latin-1, cp1252, "
                          "utf-16, shift_jis") from None
    if not isinstance(name, str) or getattr(info, "_is_text_encoding", True) is False:
        raise ConfigError(f"{prefix}{name!r} is not a text encoding; give one like latin-1 or cp1252")
    return info.name


def check_config(path, table) -> None:
    """``[corpus]`` of assay.toml at ``path``: its keys and their values (raises ConfigError)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: corpus must be a table ([corpus]), not {type(table).__name__}")
    unknown = set(table) - set(CONFIG_KEYS)
    if unknown:
        raise ConfigError(f"{path}: [corpus] has unknown setting(s) {', '.join(sorted(unknown))}; allowed: "
                          f"{', '.join(CONFIG_KEYS)} (max_file_mb is in [run])")
    ReadOptions.make(**table, where=f"{path}: [corpus]")


def from_config(config: dict, include=None, exclude=None, encoding=None, extensionless=None,
                max_file_mb: float | None = None, max_expanded_mb: float | None = None,
                read_timeout_s: float | None = None) -> ReadOptions:
    """The options a command reads a corpus with: each flag given (not None, or a non-empty tuple of globs),
    else ``[corpus]`` of ``config`` (a parsed assay.toml), else the default; the bounds on one file from
    ``--max-file-mb``, ``--max-expanded-mb`` and ``--read-timeout``, else ``[run]``'s keys of those names."""
    table = config.get("corpus", {})
    where = f"{config['_path']}: [corpus]" if "_path" in config and table else ""
    base = ReadOptions.make(**table, where=where) if table else ReadOptions()
    flags = ReadOptions.make(include=include or (), exclude=exclude or (), encoding=encoding)
    run = config.get("run", {})
    limit = max_file_mb if max_file_mb is not None else run.get("max_file_mb", DEFAULT_MAX_FILE_MB)
    expanded = max_expanded_mb if max_expanded_mb is not None else run.get("max_expanded_mb", DEFAULT_MAX_EXPANDED_MB)
    seconds = read_timeout_s if read_timeout_s is not None else run.get("read_timeout_s", DEFAULT_READ_TIMEOUT_S)
    return ReadOptions(include=flags.include or base.include, exclude=flags.exclude or base.exclude,
                       encoding=flags.encoding or base.encoding,
                       extensionless=base.extensionless if extensionless is None else bool(extensionless),
                       max_file_mb=limit, max_expanded_mb=expanded, read_timeout_s=seconds)
