"""One exception root; the CLI turns each into a one-line message and an exit code."""

from __future__ import annotations


class AssayError(Exception):
    """Base of every error assay reports to a user. ``exit_code`` is what the CLI returns."""

    exit_code = 1


class ConfigError(AssayError):
    """A bad option, setting or configuration value."""


class UsageError(ConfigError):
    """A value given on the command line that cannot be used (as click's own usage errors: exit code 2).

    The message names the option, or where the value came from, and what is allowed.
    """

    exit_code = 2


class CorpusError(AssayError):
    """A corpus file that cannot be ingested (not UTF-8, empty, binary, unreadable)."""


class JudgmentsError(AssayError):
    """A judgments file that does not parse or whose quotes do not resolve.

    ``problems`` holds every problem found, one line each, so a user fixes them all at once.
    """

    exit_code = 3

    def __init__(self, problems: list[str], summary: str | None = None):
        from assay.core.escape import terminal

        self.problems = list(problems)
        head = summary or f"{len(self.problems)} problem(s) in judgments"
        # each problem one line, whatever a file name or value in it holds: a newline cannot forge another line
        super().__init__(terminal(head) + ":\n" + "\n".join("  " + terminal(p) for p in self.problems))


class NotFormatted(AssayError):
    """`assay judgments fmt --check` found a judgments file that is not in the layout fmt writes.

    ``path`` is the file, ``diff`` the unified diff formatting would apply.
    """

    exit_code = 9

    def __init__(self, message: str, diff: str = "", path=None):
        self.diff, self.path = diff, path
        super().__init__(message)


class FormatError(AssayError):
    """A test-collection file (BEIR, TREC) that does not parse.

    ``path`` and the 1-based ``line`` (None when the problem is not on one line) say where; the
    message says what was expected there.
    """

    def __init__(self, path, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


class WarehouseError(AssayError):
    """The warehouse is missing, locked, too new, or lacks the run asked for."""


class RunNotFound(WarehouseError):
    """No completed run has the given id."""


class AmbiguousRunId(RunNotFound):
    """A part of an id that names several runs (a prefix of several sweeps). ``prefix`` is what was given,
    ``matches`` the runs it matches, each described in a few words (``20261130T101500-ab12cd (bm25)``)."""

    SHOWN = 10

    def __init__(self, prefix: str, matches: list[str], what: str = "run", note: str = "", part: str = "id part"):
        self.prefix, self.matches = prefix, list(matches)
        shown = ", ".join(self.matches[:self.SHOWN])
        if len(self.matches) > self.SHOWN:
            shown += f" and {len(self.matches) - self.SHOWN} more"
        super().__init__(f"{what} {part} {prefix!r} matches {len(self.matches)} {what}s{note}: {shown}; give more "
                         f"of the id")


class QueryNotFound(WarehouseError):
    """A run has no question with the given id; the message names the run and the nearest ids it has."""


class RunFailed(AssayError):
    """A run whose answer stage could not run (status ``failed`` or ``blocked``; see assay.runs.runner).

    The run is stored, so its raw records can be inspected (`assay answers show RUN_ID`), but it
    has no trustworthy metrics: recording it, and gating or regressing on it, exits 8.
    ``run_id``, ``status`` and ``reason`` say which run and why.
    """

    exit_code = 8

    def __init__(self, message: str, run_id: str | None = None, status: str | None = None,
                 reason: str | None = None):
        self.run_id, self.status, self.reason = run_id, status, reason
        super().__init__(message)


class ModelNotAvailable(AssayError):
    """A model assay needs is neither in the local cache nor at the path given; nothing is downloaded."""

    exit_code = 4


class CalibrationError(AssayError):
    """Calibration cannot be fitted or applied: a missing label class, a malformed score, a bad threshold."""


class ExportError(AssayError):
    """An export that cannot be written as asked: a non-empty output directory, an id a TREC file cannot carry."""


class RetrieverError(AssayError):
    """An external retriever failed: a program or service that does not answer, answers badly, or is missing."""

    exit_code = 5


class ModelEndpointError(AssayError):
    """A model endpoint failed one request: a status error, a timeout, an unreachable host, an answer that is not JSON.

    ``status`` is the HTTP status (None when no answer came), ``raw`` the answer's text when
    there was one, so a caller can store what came back; ``attempts`` counts the HTTP requests
    made. The message never contains the API key.
    """

    exit_code = 5

    def __init__(self, message: str, status: int | None = None, raw: str | None = None,
                 attempts: int = 1):
        self.status = status
        self.raw = raw
        self.attempts = attempts
        super().__init__(message)


class RunBlocked(ModelEndpointError):
    """The endpoint is rate-limiting every request: the run must stop, and is marked blocked."""


class ProjectExists(AssayError):
    """`assay init` would overwrite files of a project (the message names each); nothing was written."""


class ExtraMissing(AssayError):
    """A feature needs one of assay's extras, which is not installed (``assay.core.extras``): exit code 2, as a usage
    error, since nothing was done. ``extra`` is its name, ``what`` the feature that needs it."""

    exit_code = 2

    def __init__(self, extra: str, what: str):
        self.extra, self.what = extra, what
        super().__init__(f"{what} needs assay's {extra} extra: pip install 'assay[{extra}]'")


class WarehouseLocked(WarehouseError):
    """Another process held the warehouse's lock for longer than an open waits (assay.store.warehouse.connect)."""
