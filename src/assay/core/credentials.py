"""Credentials: which environment variables hold them, the few variables a child process gets, and their values
removed from text in every form a remote party or a subprocess can give them back.

A variable holds a credential when assay's configuration names it (``*_api_key_env``) or when its
name, upper-cased, ends in ``_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD``, ``_PASSWD``,
``_CREDENTIALS`` or ``APIKEY``, or is one of ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` all match).

``redact`` replaces each secret with ``***`` wherever it appears raw, JSON-escaped (any mix of
``\\uXXXX`` escapes, ``\\/``, escapes nested to any depth, as in tool-call arguments that are JSON
inside JSON), URL-encoded (``%XX``, upper or lower case, encoded again as ``%25XX``) or as an HTML
character reference (``&#115;``, ``&#x73;``), character by character, in any mixture.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

MASK = "***"
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_CREDENTIALS", "APIKEY")
SECRET_NAMES = frozenset({"KEY", "TOKEN", "SECRET", "PASSWORD"})
# Values of variables caught only by their name's shape are redacted when at least this long:
# shorter ones ("1", "yes") are settings, not credentials, and would mangle every reply.
MIN_RULE_SECRET = 8


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES)


# What a child process needs to start and behave as it would in a shell: where programs are, who and where the
# user is, the locale, the terminal, the temporary directory (and on Windows what its runtime needs to start).
# Nothing else of assay's environment reaches a child unless the pipeline names it (pass_env): a credential is
# not always named like one (DATABASE_URL, SECRET_KEY_BASE, SLACK_WEBHOOK_URL), so no list of names to drop is safe.
CHILD_ENV_ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR",
                     "TEMP", "TMP", "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE")
CHILD_ENV_PREFIXES = ("LC_",)  # LC_ALL, LC_CTYPE, ...


def child_environment(*, passed: Iterable[str | None] = (), environ: Mapping[str, str] | None = None) -> dict:
    """The variables of ``environ`` (the process environment by default) a child process gets: those of
    ``CHILD_ENV_ALLOWED`` and ``LC_*``, and those named in ``passed`` (a pipeline's ``pass_env``), which are
    passed whatever their name: naming one is the user's decision. Nothing else."""
    environ = os.environ if environ is None else environ
    keep = set(CHILD_ENV_ALLOWED) | {n for n in passed if n}
    return {k: v for k, v in environ.items() if k in keep or k.startswith(CHILD_ENV_PREFIXES)}


def secret_values(configured: Iterable[str | None] = (), environ: Mapping[str, str] | None = None) -> list[str]:
    """The values to redact: those of the configured variables (any length) and of every variable
    whose name looks like a credential's (at least ``MIN_RULE_SECRET`` characters), each also without
    the whitespace around it (a value read from a file ends in a newline; what a server or a program
    echoes back is the key as it was sent or read, without it)."""
    environ = os.environ if environ is None else environ
    names = [n for n in configured if n]
    values = [environ[n] for n in names if environ.get(n)]
    values += [v for k, v in environ.items() if is_secret_name(k) and len(v.strip()) >= MIN_RULE_SECRET]
    values += [v.strip() for v in values if v.strip()]
    return sorted(set(values), key=lambda v: (-len(v), v))


def key_problem(value: str) -> str | None:
    """What makes ``value`` unusable as a key in an HTTP header, in words that do not show it; None if nothing.
    An HTTP header holds ASCII without control characters, and a key holds no whitespace: one read from a file
    with its newline would be sent as another key (or not at all) and shown in the error that follows."""
    if value != value.strip():
        return "has whitespace around the key (a trailing newline?)"
    if not value.isascii():
        at = next(i for i, c in enumerate(value) if not c.isascii())
        return f"holds a character that is not ASCII (at position {at + 1} of {len(value)})"
    if any(c.isspace() or not c.isprintable() for c in value):
        return "holds whitespace or a control character inside the key"
    return None


def read_key(name: str | None, where: str) -> str | None:
    """The value of the environment variable ``name`` (None when it is unset or empty); refuses one that
    ``key_problem`` finds unusable with a ``ConfigError`` naming the variable, never the value."""
    from assay.core.errors import ConfigError

    value = os.environ.get(name) if name else None
    if not value:
        return None
    problem = key_problem(value)
    if problem is not None:
        fix = (f'set it to the key alone, e.g. export {name}="$(tr -d \'[:space:]\' < KEYFILE)"'
               if "whitespace" in problem else "set it to the key your provider issued (keys are ASCII)")
        raise ConfigError(f"{where}: environment variable {name} {problem}; {fix}")
    return value


# Query parameters whose value is taken for a credential wherever it comes back (besides the rule of
# is_secret_name: api_key, access_token, client_secret ...): signatures and codes of signed and OAuth URLs.
URL_SECRET_PARAMS = frozenset({"SIG", "SIGNATURE", "CODE", "AUTH", "AUTHORIZATION", "CREDENTIAL", "PASS", "PWD",
                               "APIKEY", "API_KEY", "ACCESS_TOKEN", "X_AMZ_SIGNATURE", "X_AMZ_CREDENTIAL"})
# A query value at least this long is taken for a credential too, whatever its name: shorter ones are versions,
# dates and flags (api-version=2024-02-01) that a reply may well say again.
URL_OPAQUE_CHARS = 16


def redact_url(url):
    """``url`` as it may be stored or shown: the user and password of its userinfo, every query value and its
    fragment replaced by ``***`` (``https://***@host/v1?api-version=***``); scheme, host, port and path kept.
    A credential in the path itself (a webhook's token) is not recognised. Anything not a string comes back
    unchanged; text that is not a URL comes back as ``***``."""
    if not isinstance(url, str) or not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a bad port raises here, not later)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" not in netloc and not parts.query and not parts.fragment:
        return url  # nothing to hide: as given (urlsplit drops tabs and newlines, which errors must show escaped)
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{p.split('=', 1)[0]}={MASK}" if "=" in p else (MASK if p else p)
                     for p in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


URL_KEYS = frozenset({"url", "base_url", "generator_base_url", "judge_base_url"})


def redact_config_urls(value):
    """A stored run configuration with ``redact_url`` applied to the value of every key named like a URL
    (``URL_KEYS``), at any depth: what reports and exports show of a run stored before URLs were redacted."""
    if isinstance(value, dict):
        return {k: redact_url(v) if k in URL_KEYS and isinstance(v, str) else redact_config_urls(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact_config_urls(v) for v in value]
    return value


def url_secrets(url) -> list[str]:
    """The parts of ``url`` to redact wherever they come back (a server quoting the URL it was sent): the password
    of its userinfo, the values of query parameters named like credentials (``api_key``, ``token``, ``sig``, ...)
    and every query value of at least ``URL_OPAQUE_CHARS`` characters, decoded as the server reads them and as
    written; like the values of variables caught by their name, only those of at least ``MIN_RULE_SECRET``
    characters (a shorter one would mangle every reply that says it)."""
    if not isinstance(url, str) or not url:
        return []
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    userinfo = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
    if ":" in userinfo:
        password = userinfo.split(":", 1)[1]
        found += [password, unquote(password)]
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        upper = name.upper().replace("-", "_")
        if is_secret_name(upper) or upper in URL_SECRET_PARAMS or len(value) >= URL_OPAQUE_CHARS:
            found.append(value)
    for piece in parts.query.split("&"):
        if "=" in piece and piece.split("=", 1)[1] and unquote(piece.split("=", 1)[1]) in found:
            found.append(piece.split("=", 1)[1])
    return sorted({f for f in found if len(f) >= MIN_RULE_SECRET}, key=lambda v: (-len(v), v))


def _char_pattern(ch: str) -> str:
    """Every spelling of one character this module undoes: itself, a JSON escape behind any run of
    backslashes (themselves possibly escaped as \\u005c), %XX (possibly %25XX), &#N; and &#xH;."""
    code = ord(ch)
    if code > 0xFFFF:  # a JSON escape of a character outside the BMP is a surrogate pair
        hi, lo = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        units = f"u{hi:04x}" + r"(?:\\|\\u005[cC])+" + f"u{lo:04x}"
    else:
        units = f"u{code:04x}"
    backslashes = r"(?:\\|(?i:\\u005c))+"
    forms = [re.escape(ch), backslashes + f"(?i:{units})"]
    if ch in "/\"\\":
        forms.append(backslashes + re.escape(ch))
    forms.append("".join(f"(?i:%(?:25)*{b:02x})" for b in ch.encode("utf-8")))
    forms.append(f"(?i:&#0*{code};|&#x0*{code:x};)")
    return "(?:" + "|".join(forms) + ")"


@lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern | None:
    parts = ["".join(_char_pattern(c) for c in s) for s in secrets if s]
    return re.compile("|".join(parts)) if parts else None


def redact(text, secrets: Iterable[str]):
    """``text`` with every secret replaced by ``***`` in every form (see the module docstring);
    anything that is not a string (None, a number) comes back unchanged."""
    if not isinstance(text, str) or not text:
        return text
    pattern = _pattern(tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s))))
    return pattern.sub(MASK, text) if pattern is not None else text


def redact_all(value, secrets: Iterable[str]):
    """``redact`` applied to every string inside lists, tuples and dict keys and values."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_all(k, secrets): redact_all(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_all(v, secrets) for v in value)
    return value
