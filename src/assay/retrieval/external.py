"""Retrievers that live outside assay: a Python function, a program, an HTTP service, a stored TREC run, a plugin.

Every one answers a question with a JSON list of results, best first. A result is
either a document id string or an object::

    {"doc_id": "guide.md", "score": 3.2, "start": 120, "end": 480}   # start/end optional
    {"chunk_id": "guide.md#120-480", "score": 3.2}                   # score optional

A span is characters [start, end) of the assay document text; no span means the
whole document, i.e. chunk ``<doc_id>#0-<length>``. The external system's order
is its ranking and is kept as given: assay does not re-sort, so how equal scores
are ordered is the external system's business (``TIE_BREAK`` does not apply).

Programs and services may also answer ``{"results": [...]}``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import queue
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from assay.errors import RetrieverError
from assay.retrieval import Hit

PLUGIN_GROUP = "assay.retrievers"
STDERR_TAIL_CHARS = 500
STDERR_KEEP_BYTES = 4 * STDERR_TAIL_CHARS  # enough for 500 characters of UTF-8
EXCERPT_CHARS = 200


def _excerpt(text: str, n: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _score(value, where: str):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RetrieverError(f"{where}: score must be a finite number, got {value!r}")
    return float(value)


def _parse_chunk_id(chunk_id: str) -> tuple[str, int, int] | None:
    doc_id, sep, span = chunk_id.rpartition("#")
    start, dash, end = span.partition("-")
    if not sep or not dash or not start.isdigit() or not end.isdigit():
        return None
    return doc_id, int(start), int(end)


def _span_chunk_id(doc_id: str, start, end, docs: Mapping[str, int], where: str) -> str:
    length = docs[doc_id]
    if not (_is_int(start) and _is_int(end) and 0 <= start < end <= length):
        raise RetrieverError(
            f"{where}: bad span [{start!r}, {end!r}) for {doc_id!r}: need integers 0 <= start < end <= {length}"
        )
    return f"{doc_id}#{start}-{end}"


def _known(doc_id, docs: Mapping[str, int], where: str) -> str:
    if not isinstance(doc_id, str) or doc_id not in docs:
        raise RetrieverError(
            f"{where}: unknown document id {doc_id!r}; results must name documents of the assay corpus"
        )
    return doc_id


def _one(item, docs: Mapping[str, int], where: str) -> tuple[str, str, float | None]:
    """(chunk_id, doc_id, score or None) of one result."""
    if isinstance(item, tuple) and len(item) == 2:  # (id, score), from Python callers
        chunk_id, doc_id, _ = _one(item[0], docs, where)
        return chunk_id, doc_id, _score(item[1], where)
    if isinstance(item, str):
        if item in docs:
            return f"{item}#0-{docs[item]}", item, None
        parsed = _parse_chunk_id(item)  # a bare chunk id is accepted too
        doc_id = _known(parsed[0] if parsed else item, docs, where)
        return _span_chunk_id(doc_id, parsed[1], parsed[2], docs, where), doc_id, None
    if not isinstance(item, dict):
        raise RetrieverError(f"{where}: a result must be a document id or an object, got {_excerpt(repr(item))}")
    score = _score(item.get("score"), where)
    has_span = "start" in item or "end" in item
    if "chunk_id" in item:
        if "doc_id" in item or has_span:
            raise RetrieverError(f"{where}: give either chunk_id or doc_id (with optional start/end), not both")
        chunk_id = item["chunk_id"]
        parsed = _parse_chunk_id(chunk_id) if isinstance(chunk_id, str) else None
        if parsed is None:
            raise RetrieverError(f"{where}: chunk_id {chunk_id!r} is not of the form '<doc_id>#<start>-<end>'")
        doc_id = _known(parsed[0], docs, where)
        return _span_chunk_id(doc_id, parsed[1], parsed[2], docs, where), doc_id, score
    if "doc_id" not in item:
        raise RetrieverError(f"{where}: a result object needs doc_id or chunk_id, got {_excerpt(repr(item))}")
    doc_id = _known(item["doc_id"], docs, where)
    if not has_span:
        return f"{doc_id}#0-{docs[doc_id]}", doc_id, score
    return _span_chunk_id(doc_id, item.get("start"), item.get("end"), docs, where), doc_id, score


def parse_results(raw, docs: Mapping[str, int], where: str) -> list[Hit]:
    """Validate one question's results and turn them into hits, in the order given.

    ``docs`` maps each document id to the length of its text. Besides the JSON
    forms in the module docstring, a Python caller may give ``(id, score)`` pairs,
    where the id is a document id or a chunk id. A result without a
    score scores ``-rank`` (1-based rank in the returned list), so scores fall with
    position. A chunk returned twice is kept at its first position only. Any
    problem raises ``RetrieverError`` whose message starts with ``where``.
    """
    if not isinstance(raw, list):
        raise RetrieverError(f"{where}: expected a list of results, got {type(raw).__name__}")
    hits: list[Hit] = []
    seen: set[str] = set()
    for i, item in enumerate(raw, start=1):
        chunk_id, doc_id, score = _one(item, docs, f"{where}, result {i}")
        if chunk_id in seen:
            continue
        seen.add(chunk_id)
        hits.append(Hit(chunk_id, doc_id, score if score is not None else -float(len(hits) + 1)))
    return hits


def _unwrap(payload, where: str):
    if isinstance(payload, dict):
        if "results" not in payload:
            raise RetrieverError(f"{where}: expected a list of results or {{\"results\": [...]}}, "
                                 f"got an object with keys {sorted(payload)[:10]}")
        return payload["results"]
    return payload


def _question(query: str, query_id) -> str:
    question = f"question {_excerpt(query, 80)!r}"
    return question if query_id is None else f"query {query_id}, {question}"


class CallableRetriever:
    """A Python function ``fn(question, limit)`` returning results, or ``(id, score)`` pairs."""

    def __init__(self, fn, docs: Mapping[str, int], name: str | None = None):
        self.fn = fn
        self.docs = docs
        self.function = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
        self.name = name or getattr(fn, "__name__", None) or "callable"

    def config(self) -> dict:
        return {"name": self.name, "kind": "callable", "function": self.function}

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if limit <= 0:
            return []
        where = f"retriever {self.name!r} ({_question(query, query_id)})"
        try:
            raw = self.fn(query, limit)
        except Exception as exc:
            raise RetrieverError(f"{where}: {type(exc).__name__}: {exc}") from exc
        return parse_results(_unwrap(raw, where), self.docs, where)[:limit]

    def close(self) -> None:
        pass


class CommandRetriever:
    """A long-running program that answers one JSON line per question on stdout.

    Each question is one line on its stdin: ``{"query_id": ..., "query": ..., "limit": ...}``.
    Stdout carries answers only (logs go to stderr, whose tail appears in errors).
    A timeout or a line that is not JSON leaves the conversation out of step, so
    the program is stopped and later questions fail at once.
    """

    def __init__(self, argv: list[str], docs: Mapping[str, int], timeout_s: float = 30.0, cwd=None,
                 name: str | None = None):
        if not argv:
            raise RetrieverError("command retriever: empty command")
        self.argv = [str(a) for a in argv]
        self.docs = docs
        self.timeout_s = timeout_s
        self.name = name or Path(self.argv[0]).name
        self._where = f"command {self.name!r}"
        self._lock = threading.Lock()
        self._failed: str | None = None
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
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
            for line in self._proc.stdout:
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
        text = bytes(self._stderr_tail).decode("utf-8", errors="replace")
        return text[-STDERR_TAIL_CHARS:].strip()

    def config(self) -> dict:
        return {"name": self.name, "kind": "command", "argv": self.argv}

    def _fail(self, message: str) -> RetrieverError:
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
            try:
                payload = json.loads(line)
            except json.JSONDecodeError:
                line = line.rstrip("\n")
                raise self._fail(f"{where}: answered with a line that is not JSON: {_excerpt(line)!r}") from None
        return parse_results(_unwrap(payload, where), self.docs, where)[:limit]

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


class HttpRetriever:
    """A service that takes ``POST {"query_id", "query", "limit"}`` as JSON and answers results as JSON.

    The API key is read from the environment variable ``api_key_env`` and sent as
    ``Authorization: Bearer <key>``; it never appears in ``config()`` or in errors.
    ``timeout_s`` bounds connecting and each read from the socket.
    """

    def __init__(self, url: str, docs: Mapping[str, int], timeout_s: float = 30.0,
                 headers: Mapping[str, str] | None = None, api_key_env: str | None = None,
                 name: str | None = None):
        self.url = url
        self.docs = docs
        self.timeout_s = timeout_s
        self.name = name or url
        self.api_key_env = api_key_env
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self._secrets: list[str] = [v for v in (headers or {}).values() if v]
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise RetrieverError(f"HTTP retriever {url}: environment variable {api_key_env} is not set; "
                                     "export it with the API key")
            self._headers["Authorization"] = f"Bearer {key}"
            self._secrets.append(key)

    def config(self) -> dict:
        # Header values may be credentials: only their names are part of the configuration.
        return {"name": self.name, "kind": "http", "url": self.url,
                "headers": sorted(k for k in self._headers if k != "Authorization"),
                "api_key_env": self.api_key_env}

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if limit <= 0:
            return []
        where = f"HTTP retriever {self.url} ({_question(query, query_id)})"
        body = json.dumps({"query_id": query_id, "query": query, "limit": limit}).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                data = response.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", errors="replace") if exc.fp else ""
            raise RetrieverError(self._redact(
                f"{where}: HTTP status {exc.code}: {_excerpt(text.strip()) or exc.reason}")) from None
        except TimeoutError:
            raise RetrieverError(f"{where}: no answer within {self.timeout_s:g}s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise RetrieverError(f"{where}: no answer within {self.timeout_s:g}s") from None
            raise RetrieverError(self._redact(f"{where}: cannot reach the service: {reason}")) from None
        except OSError as exc:  # connection reset, remote closed mid-response
            raise RetrieverError(self._redact(f"{where}: {type(exc).__name__}: {exc}")) from None
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            text = data.decode("utf-8", errors="replace")
            raise RetrieverError(self._redact(f"{where}: the answer is not JSON: {_excerpt(text)!r}")) from None
        return parse_results(_unwrap(payload, where), self.docs, where)[:limit]

    def close(self) -> None:
        pass


class TrecRunRetriever:
    """A stored TREC run (``qid Q0 docno rank score tag``) replayed as a retriever of whole documents.

    Each query's documents are ordered as trec_eval orders them: score descending,
    equal scores by docno descending; the rank column is ignored, as trec_eval does.
    A query the run does not contain retrieves nothing.
    """

    def __init__(self, path, docs: Mapping[str, int], name: str | None = None):
        self.path = Path(path)
        self.docs = docs
        self.name = name or self.path.stem
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise RetrieverError(f"TREC run {self.path}: cannot read: {exc.strerror or exc}") from exc
        self.sha256 = hashlib.sha256(data).hexdigest()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RetrieverError(f"TREC run {self.path}: not UTF-8 (byte {exc.start})") from None
        self.tags: set[str] = set()
        runs: dict[str, dict[str, tuple[float, int]]] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{self.path}:{number}"
            fields = line.split()
            if len(fields) != 6:
                raise RetrieverError(f"{where}: expected 6 fields 'qid Q0 docno rank score tag', got {len(fields)}")
            qid, _, docno, _, score_text, tag = fields
            try:
                score = float(score_text)
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                raise RetrieverError(f"{where}: score {score_text!r} is not a finite number")
            if docno not in docs:
                raise RetrieverError(f"{where}: unknown document id {docno!r}; the run must use the corpus's ids")
            ranking = runs.setdefault(qid, {})
            if docno in ranking:
                raise RetrieverError(f"{where}: {docno!r} appears twice for query {qid} "
                                     f"(first at line {ranking[docno][1]})")
            ranking[docno] = (score, number)
            self.tags.add(tag)
        self._runs = {
            qid: [Hit(f"{d}#0-{docs[d]}", d, s) for s, d in
                  sorted(((s, d) for d, (s, _) in ranking.items()), reverse=True)]
            for qid, ranking in runs.items()
        }

    def query_ids(self) -> list[str]:
        return sorted(self._runs)

    def config(self) -> dict:
        return {"name": self.name, "kind": "trec_run", "path": str(self.path), "sha256": self.sha256,
                "tags": sorted(self.tags)}

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if query_id is None:
            raise RetrieverError(f"TREC run {self.path}: needs the query id of question {_excerpt(query, 80)!r}")
        return self._runs.get(str(query_id), [])[:max(limit, 0)]

    def close(self) -> None:
        pass


def _plugin_entry_points() -> dict[str, list[metadata.EntryPoint]]:
    found: dict[str, list[metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=PLUGIN_GROUP):
        same = found.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):  # one distribution seen twice is not a clash
            same.append(ep)
    return found


def plugin_names() -> list[str]:
    """Names of the retrievers installed under the entry point group ``assay.retrievers``."""
    return sorted(_plugin_entry_points())


def load_plugin(name: str):
    """The factory ``factory(docs, **options)`` registered under ``name`` in ``assay.retrievers``."""
    found = _plugin_entry_points()
    if name not in found:
        available = ", ".join(sorted(found)) or "none installed"
        raise RetrieverError(f"unknown retriever plugin {name!r}; available ({PLUGIN_GROUP}): {available}")
    if len(found[name]) > 1:
        values = ", ".join(ep.value for ep in found[name])
        raise RetrieverError(f"retriever plugin {name!r} is registered more than once ({values}); "
                             "uninstall one of the packages")
    ep = found[name][0]
    try:
        return ep.load()
    except Exception as exc:
        raise RetrieverError(f"retriever plugin {name!r} ({ep.value}) cannot be loaded: "
                             f"{type(exc).__name__}: {exc}") from exc


def plugin_retriever(name: str, docs: Mapping[str, int], **options):
    """Build the plugin retriever ``name`` and check that it has ``search`` and ``config``."""
    factory = load_plugin(name)
    try:
        retriever = factory(docs, **options)
    except RetrieverError:
        raise
    except Exception as exc:
        raise RetrieverError(f"retriever plugin {name!r} failed to start: {type(exc).__name__}: {exc}") from exc
    missing = [m for m in ("search", "config") if not callable(getattr(retriever, m, None))]
    if missing:
        raise RetrieverError(f"retriever plugin {name!r} returned {type(retriever).__name__}, "
                             f"which lacks {' and '.join(m + '()' for m in missing)}")
    return retriever
