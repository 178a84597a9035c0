"""A long-running program as a retriever: one JSON line in, one JSON line out, per question."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from assay.core import jsonin
from assay.core.credentials import child_environment, redact, secret_values
from assay.core.errors import RetrieverError
from assay.core.http import DEFAULT_MAX_BYTES
from assay.retrieval import Hit
from assay.retrieval.results import _excerpt, _question, _unwrap, parse_results

STDERR_TAIL_CHARS = 500
STDERR_KEEP_BYTES = 4 * STDERR_TAIL_CHARS  # enough for 500 characters of UTF-8


class _TooLong:
    """What the reader hands on instead of a line longer than the limit: its start, to quote."""

    def __init__(self, head: str):
        self.head = head


class CommandRetriever:
    """A long-running program that answers one JSON line per question on stdout.

    Each question is one line on its stdin: ``{"query_id": ..., "query": ..., "limit": ...}``.
    Stdout carries answers only (logs go to stderr, whose tail appears in errors).
    A timeout or a line that is not JSON leaves the conversation out of step, so
    the program is stopped and later questions fail at once.

    The program gets only PATH, HOME, USER, LANG, ``LC_*``, TZ, TERM, TMPDIR and the few others
    ``assay.core.credentials.CHILD_ENV_ALLOWED`` lists, plus the variables named in ``pass_env`` (the
    pipeline's ``pass_env``, ``--pass-env``): nothing else of assay's environment, so no credential,
    whatever its name (``DATABASE_URL``, ``SECRET_KEY_BASE``, ``SLACK_WEBHOOK_URL``). A program that
    needs a key reads it from its own configuration or is passed it by name. The values of the variables
    named in ``secret_env`` (the configured ``*_api_key_env`` names) and of every credential-named
    variable are redacted from every error, the stderr tail included, in any encoding.

    A reply is one line of at most ``max_line_chars`` characters (8 Mi, as an HTTP reply's bytes): a longer one
    stops the program, as a line that is not JSON does, and is never held whole.
    """

    def __init__(self, argv: list[str], docs: Mapping[str, int], timeout_s: float = 30.0, cwd=None,
                 name: str | None = None, secret_env=(), pass_env=(), max_line_chars: int = DEFAULT_MAX_BYTES):
        if not argv:
            raise RetrieverError("command retriever: empty command")
        self.argv = [str(a) for a in argv]
        self.docs = docs
        self.timeout_s = timeout_s
        self.max_line_chars = max_line_chars
        self.name = name or Path(self.argv[0]).name
        self._where = f"command {self.name!r}"
        self._lock = threading.Lock()
        self._failed: str | None = None
        secret_env = [n for n in secret_env if n]
        self._secrets = secret_values(secret_env)
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
                env=child_environment(passed=pass_env),
            )
        except OSError as exc:
            raise RetrieverError(f"{self._where}: cannot start {self.argv[0]!r}: {exc}") from exc
        self._lines: queue.Queue = queue.Queue()
        self._stderr_tail = bytearray()  # the last STDERR_KEEP_BYTES bytes the program wrote there
        self._readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read_stdout(self) -> None:
        try:
            while line := self._proc.stdout.readline(self.max_line_chars + 1):
                if len(line) > self.max_line_chars and not line.endswith("\n"):
                    self._lines.put(_TooLong(line[:STDERR_TAIL_CHARS]))
                    return  # the rest is never read: search() stops the program
                self._lines.put(line)
        except (OSError, ValueError):  # closed under us by close()
            pass
        finally:
            self._lines.put(None)

    def _read_stderr(self) -> None:
        fd = self._proc.stderr.fileno()
        try:
            while chunk := os.read(fd, 4096):
                self._stderr_tail += chunk
                del self._stderr_tail[:-STDERR_KEEP_BYTES]
        except OSError:
            pass

    def stderr_tail(self) -> str:
        # Redacted before it is cut: a key the cut would split is still whole in the longer buffer.
        text = redact(bytes(self._stderr_tail).decode("utf-8", errors="replace"), self._secrets)
        return text[-STDERR_TAIL_CHARS:].strip()

    def config(self) -> dict:
        return {"name": self.name, "kind": "command", "argv": self.argv}

    def _fail(self, message: str) -> RetrieverError:
        message = redact(message, self._secrets)
        self._failed = message
        self.close()
        return RetrieverError(message)

    def _exited(self, where: str) -> RetrieverError:
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._readers[1].join(timeout=2)
        status = f"exited with code {code}" if code is not None else "closed its output"
        tail = self.stderr_tail()
        return self._fail(f"{where}: the program {status} before answering; "
                          + (f"stderr ends: {tail}" if tail else "stderr was empty"))

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if limit <= 0:
            return []
        where = f"{self._where} ({_question(query, query_id)})"
        with self._lock:
            if self._failed is not None:
                raise RetrieverError(f"{where}: the program was stopped after an earlier error: {self._failed}")
            request = json.dumps({"query_id": query_id, "query": query, "limit": limit}, ensure_ascii=False)
            try:
                self._proc.stdin.write(request + "\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):
                raise self._exited(where) from None
            try:
                line = self._lines.get(timeout=self.timeout_s)
            except queue.Empty:
                raise self._fail(f"{where}: no answer within {self.timeout_s:g}s") from None
            if line is None:
                raise self._exited(where)
            if isinstance(line, _TooLong):
                raise self._fail(f"{where}: answered with a line longer than {self.max_line_chars} characters, the "
                                 f"most assay reads of one answer; it begins: {_excerpt(line.head)!r}")
            try:
                payload = jsonin.loads(line)
            except jsonin.TooDeep as exc:
                raise self._fail(f"{where}: answered with {exc}: {_excerpt(line.rstrip())!r}") from None
            except ValueError:  # also an integer with too many digits
                line = line.rstrip("\n")
                raise self._fail(f"{where}: answered with a line that is not JSON: {_excerpt(line)!r}") from None
        try:
            return parse_results(_unwrap(payload, where), self.docs, where)[:limit]
        except RetrieverError as exc:
            raise RetrieverError(redact(str(exc), self._secrets)) from None

    def close(self) -> None:
        """Stop the program: close its stdin, terminate, and kill it if it is still there after 5 s."""
        proc = self._proc
        try:
            proc.stdin.close()
        except OSError:
            pass
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for t in self._readers:
            t.join(timeout=2)
        if not any(t.is_alive() for t in self._readers):  # a child may still hold the pipes open
            for stream in (proc.stdout, proc.stderr):
                stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
