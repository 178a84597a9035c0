"""An HTTP service as a retriever: ``POST`` a question as JSON, results come back as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping

from assay.core import jsonin
from assay.core.credentials import read_key, redact, redact_url, secret_values, url_secrets
from assay.core.errors import RetrieverError
from assay.core.escape import terminal
from assay.core.http import DEFAULT_MAX_BYTES, TransportError, post_json
from assay.retrieval import Hit
from assay.retrieval.results import _excerpt, _question, _unwrap, parse_results


class HttpRetriever:
    """A service that takes ``POST {"query_id", "query", "limit"}`` as JSON and answers results as JSON.

    The API key is read from the environment variable ``api_key_env`` and sent as
    ``Authorization: Bearer <key>``; it never appears in ``config()`` or in errors (nor do the
    values of ``headers``, nor any credential-named variable of assay's environment), raw,
    JSON-escaped or URL-encoded; credentials in the URL itself (userinfo, query) are shown as ``***`` in errors
    and the configuration, and redacted from replies (``assay.core.credentials.redact_url``). The request goes through ``assay.core.http``: ``timeout_s`` bounds it
    in total, at most ``max_bytes`` of answer are read, and a redirect is an error, never followed.
    An answer of any JSON shape is checked by ``parse_results``: a problem is a ``RetrieverError``.
    """

    def __init__(self, url: str, docs: Mapping[str, int], timeout_s: float = 30.0,
                 headers: Mapping[str, str] | None = None, api_key_env: str | None = None,
                 name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES):
        self.url = url
        self.shown_url = redact_url(url)  # what errors and the stored config show: no credential of the URL
        self.docs = docs
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.name = name or self.shown_url
        self.api_key_env = api_key_env
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self._secrets: list[str] = ([v for v in (headers or {}).values() if v] + secret_values([api_key_env])
                                    + url_secrets(url))
        if api_key_env:
            key = read_key(api_key_env, f"HTTP retriever {terminal(self.shown_url)}")
            if not key:
                raise RetrieverError(f"HTTP retriever {terminal(self.shown_url)}: environment variable {api_key_env} is not set; "
                                     "export it with the API key")
            self._headers["Authorization"] = f"Bearer {key}"
            self._secrets.append(key)

    def config(self) -> dict:
        # Header values may be credentials: only their names are part of the configuration.
        return {"name": self.name, "kind": "http", "url": self.shown_url,
                "headers": sorted(k for k in self._headers if k != "Authorization"),
                "api_key_env": self.api_key_env}

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def search(self, query: str, limit: int, query_id=None) -> list[Hit]:
        if limit <= 0:
            return []
        where = f"HTTP retriever {terminal(self.shown_url)} ({_question(query, query_id)})"
        body = json.dumps({"query_id": query_id, "query": query, "limit": limit}).encode("utf-8")
        try:
            reply = post_json(self.url, body, self._headers, self.timeout_s, self.max_bytes)
        except TransportError as exc:
            words = {"timeout": f"no answer within {self.timeout_s:g}s",
                     "unreachable": f"cannot reach the service: {exc.detail}"}.get(exc.kind, exc.detail)
            raise RetrieverError(self._redact(f"{where}: {words}")) from None
        text = self._redact(reply.text)
        if not 200 <= reply.status < 300:
            raise RetrieverError(f"{where}: HTTP status {reply.status}: {_excerpt(text.strip()) or '(empty body)'}")
        try:
            payload = jsonin.loads(text)
        except jsonin.TooDeep as exc:
            raise RetrieverError(f"{where}: the answer is {exc}: {_excerpt(text)!r}") from None
        except ValueError:
            raise RetrieverError(f"{where}: the answer is not JSON: {_excerpt(text)!r}") from None
        try:
            return parse_results(_unwrap(payload, where), self.docs, where)[:limit]
        except RetrieverError as exc:  # a result quoting the key back is still redacted
            raise RetrieverError(self._redact(str(exc))) from None

    def close(self) -> None:
        pass
