"""Where a lake is: a local directory or an S3-compatible URL (``s3://bucket/prefix``), and the pyarrow file system
that reaches it.

Every listing of a lake, and every write to an object store, goes through the ``pyarrow.fs`` file system of its
``LakeLocation`` (``LocalFileSystem`` or ``S3FileSystem``), so the reader and the writer list partitions the same
way wherever the lake is. Only ``file`` paths and ``s3://`` URLs are lakes: any other scheme (``gs://``,
``http://``, ``s3a://``...) is refused in one line before any work.

An S3 lake takes its endpoint, region and credentials from the usual AWS variables, else from assay.toml's
``[lake]`` (``endpoint``, ``region``; never a secret: a key there is refused). The environment comes first, as
the AWS tools read it, so a CI job points a checkout at another store without editing its file:

- endpoint: ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``, ``[lake] endpoint`` (none: AWS itself);
- region: ``AWS_REGION``, ``AWS_DEFAULT_REGION``, ``[lake] region``, else ``us-east-1``;
- credentials: ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), or a profile, web
  identity or container credentials that the AWS SDK inside pyarrow finds (``AWS_PROFILE``, ``~/.aws/credentials``,
  ``AWS_WEB_IDENTITY_TOKEN_FILE``, ``AWS_CONTAINER_CREDENTIALS_*``). When none of them is there the lake is refused
  in one line: an unsigned request would fail later and less clearly, and the instance metadata service (tried
  last by the SDK) takes seconds to answer nothing off EC2.

Connections time out after ``CONNECT_TIMEOUT_S`` and a request is tried ``ATTEMPTS`` times, so an unreachable
endpoint is named in one line within seconds (``remote_error``), not after the SDK's minute of retries.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from assay.core.errors import ConfigError, WarehouseError

PARTITION_FILE = "part-0.parquet"  # LAKE/<table>/run_id=<RUN_ID>/part-0.parquet (assay.store.lake)
SCHEMES = ("s3",)
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 60.0
ATTEMPTS = 3
DEFAULT_REGION = "us-east-1"
ORPHAN_GRACE_S = 3600.0  # how old an uncommitted run's objects must be before a writer removes them (writer.py)
# the [lake] keys assay.toml may hold (baselines: runs `assay lake prune` never removes, assay.store.lake.compact)
SETTINGS = ("endpoint", "region", "orphan_grace_s", "spark_master", "baselines")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_CREDENTIAL_SOURCES = ("AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                       "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def hidden(name: str) -> bool:
    """Names readers skip: partitions still being written, and anything else not meant to be read."""
    return name.startswith(("_", "."))


class LakeLocation:
    """A lake's place: ``fs`` (a pyarrow file system), ``root`` (the lake's path in it: an absolute directory, or
    ``bucket/prefix``), ``url`` (as the user gave it; what messages name). ``local``: a directory on this machine."""

    def __init__(self, fs, root: str, url: str, scheme: str, endpoint: str | None = None, region: str | None = None,
                 orphan_grace_s: float = ORPHAN_GRACE_S):
        self.fs, self.root, self.url, self.scheme = fs, root.rstrip("/") or "/", url, scheme
        self.endpoint, self.region, self.orphan_grace_s = endpoint, region, orphan_grace_s
        self._listed: dict[str, list] | None = None  # a snapshot's listings (``snapshot``)

    def snapshot(self) -> "LakeLocation":
        """This lake with every listing remembered: what a reader uses, since it reads the lake as of its open,
        and lists each table once (a lake's files are never rewritten, so a file listed stays as listed)."""
        copy = LakeLocation(self.fs, self.root, self.url, self.scheme, self.endpoint, self.region,
                            self.orphan_grace_s)
        copy._listed = {}
        return copy

    def listed(self, path: str):
        """The FileInfo of ``path`` as a snapshot listed it, else None."""
        for infos in (self._listed or {}).values():
            for info in infos:
                if info.path == path:
                    return info
        return None

    @property
    def local(self) -> bool:
        return self.scheme == "file"

    @property
    def path(self):
        """What readers keep as their ``path``: the directory (a ``Path``) of a local lake, else this location,
        whose ``str`` is the URL."""
        return Path(self.url) if self.local else self

    def key(self, *parts: str) -> str:
        """The path of ``parts`` under the lake, in its file system."""
        return "/".join((self.root.rstrip("/"), *parts)) if parts else self.root

    def uri(self, *parts: str, scheme: str | None = None) -> str:
        """``parts`` under the lake as an engine opens it: a local path, or ``s3://bucket/...`` (``scheme``: another
        name for the same store, ``s3a`` for Hadoop)."""
        return self.key(*parts) if self.local else f"{scheme or self.scheme}://{self.key(*parts)}"

    def files(self, *parts: str) -> list:
        """Every file under ``parts`` (recursively; one paginated LIST on a store), [] when there is none."""
        from pyarrow import fs as pafs

        key = self.key(*parts)
        if self._listed is not None and key in self._listed:
            return self._listed[key]
        selector = pafs.FileSelector(key, recursive=True, allow_not_found=True)
        try:
            infos = self.fs.get_file_info(selector)
        except OSError as exc:
            raise remote_error(self, exc) from None
        files = [info for info in infos if info.type == pafs.FileType.File]
        if self._listed is not None:
            self._listed[key] = files
        return files

    def children(self) -> list[str]:
        """The names directly under the lake (its tables, and hidden names)."""
        from pyarrow import fs as pafs

        try:
            infos = self.fs.get_file_info(pafs.FileSelector(self.root, allow_not_found=True))
        except OSError as exc:
            raise remote_error(self, exc) from None
        return sorted(info.base_name for info in infos if info.type == pafs.FileType.Directory)

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"LakeLocation({self.url!r})"


def table_files(lake, table: str) -> dict[str, str]:
    """{run id: its partition file} of ``table`` (``<table>/run_id=<RUN_ID>/part-0.parquet``), hidden names left
    out, each file as an engine opens it (``LakeLocation.uri``). ``lake``: a path, URL or LakeLocation."""
    location = lake_location(lake)
    found = {}
    for info in location.files(table):
        parts = info.path[len(location.key(table)):].strip("/").split("/")
        if (len(parts) == 2 and parts[1] == PARTITION_FILE and parts[0].startswith("run_id=")
                and not hidden(parts[0])):
            found[parts[0].split("=", 1)[1]] = location.uri(table, *parts)
    return found


def lake_location(target, settings: dict | None = None) -> LakeLocation:
    """The lake at ``target`` (a path, ``s3://bucket/prefix``, or a ``LakeLocation``, returned as it is); ``settings``:
    assay.toml's ``[lake]``. Another scheme, a secret in the settings, or an S3 lake without credentials is a
    ``ConfigError`` (one line, before any work)."""
    if isinstance(target, LakeLocation):
        return target
    settings = settings or {}
    text = os.fspath(target)
    secrets = sorted(k for k in settings if any(w in k.lower() for w in ("secret", "access_key", "token", "password")))
    if secrets:
        raise ConfigError(f"[lake] {secrets[0]} in assay.toml: credentials never go in the file; set "
                          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment instead")
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise ConfigError(f"[lake] {unknown[0]} in assay.toml is not a lake setting; [lake] takes "
                          f"{', '.join(SETTINGS)}")
    grace = _grace(settings.get("orphan_grace_s", ORPHAN_GRACE_S))
    match = _SCHEME.match(text)
    if match is None:
        from pyarrow import fs as pafs

        return LakeLocation(pafs.LocalFileSystem(), Path(text).absolute().as_posix(), text, "file",
                            orphan_grace_s=grace)
    scheme = match.group(1).lower()
    if scheme not in SCHEMES:
        hint = " (write s3:// for an S3 lake; Spark's s3a is used for it where needed)" if scheme == "s3a" else ""
        raise ConfigError(f"lake {text}: {scheme}:// is not supported{hint}; a lake is a local directory or "
                          "s3://bucket/prefix (any S3-compatible store, its endpoint in AWS_ENDPOINT_URL or [lake] "
                          "endpoint); nothing was run")
    rest = text[match.end():].strip("/")
    bucket = rest.split("/", 1)[0]
    if not bucket:
        raise ConfigError(f"lake {text}: no bucket; write s3://bucket/prefix")
    endpoint = (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
                or _text(settings, "endpoint"))
    region = (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or _text(settings, "region")
              or DEFAULT_REGION)
    return LakeLocation(_s3(text, endpoint, region), rest, f"s3://{rest}", "s3", endpoint, region, grace)


def _text(settings: dict, key: str) -> str | None:
    value = settings.get(key)
    if value is not None and not (isinstance(value, str) and value):
        raise ConfigError(f"[lake] {key} in assay.toml must be a non-empty string, not {value!r}")
    return value


def _grace(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"[lake] orphan_grace_s in assay.toml must be a number of seconds >= 0, not {value!r}")
    return float(value)


def _s3(url: str, endpoint: str | None, region: str):
    """The S3 file system: explicit keys from the environment, else the SDK's own chain (a profile, web identity,
    container credentials) when one of its sources is there; none at all is refused."""
    from pyarrow import fs as pafs

    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if bool(key) != bool(secret):
        have, lack = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if key else ("AWS_SECRET_ACCESS_KEY",
                                                                              "AWS_ACCESS_KEY_ID")
        raise ConfigError(f"lake {url}: {have} is set but {lack} is not; set both (and AWS_SESSION_TOKEN for "
                          "temporary credentials); nothing was run")
    credentials = {}
    if key:
        credentials = {"access_key": key, "secret_key": secret}
        if os.environ.get("AWS_SESSION_TOKEN"):
            credentials["session_token"] = os.environ["AWS_SESSION_TOKEN"]
    elif not _sdk_credentials():
        raise ConfigError(f"lake {url}: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                          "AWS_SESSION_TOKEN for temporary ones), or AWS_PROFILE; nothing was run")
    options = {"region": region, "connect_timeout": CONNECT_TIMEOUT_S, "request_timeout": REQUEST_TIMEOUT_S,
               "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=ATTEMPTS)}
    if endpoint:
        options["endpoint_override"] = endpoint
        if endpoint.startswith("http://"):
            options["scheme"] = "http"
    return pafs.S3FileSystem(**credentials, **options)


def _sdk_credentials() -> bool:
    """Whether a source of credentials the AWS SDK reads by itself is there."""
    if any(os.environ.get(name) for name in _CREDENTIAL_SOURCES):
        return True
    home = Path.home() / ".aws"
    files = (os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / "credentials",
             os.environ.get("AWS_CONFIG_FILE") or home / "config")
    return any(Path(f).is_file() for f in files)


def remote_error(location: LakeLocation, exc: OSError, doing: str = "cannot read") -> WarehouseError:
    """One line for a failed request to the lake's store: unreachable, refused credentials, no bucket, or the
    store's own first line."""
    text = " ".join(str(exc).split())
    where = location.endpoint or "AWS S3"
    if location.local:
        return WarehouseError(f"lake {location}: {doing} it: {exc.strerror or text}")
    if "NETWORK_CONNECTION" in text or "curlCode" in text or "timed out" in text.lower():
        return WarehouseError(f"lake {location}: cannot reach the object store at {where} ({_detail(text)}); check "
                              "AWS_ENDPOINT_URL or [lake] endpoint, and that the store is up; nothing was done")
    if any(code in text for code in ("ACCESS_DENIED", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch",
                                     "ExpiredToken", "INVALID_ACCESS_KEY", "SIGNATURE_DOES_NOT_MATCH", "403")):
        return WarehouseError(f"lake {location}: the object store at {where} refused the credentials "
                              f"({_detail(text)}); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
                              "AWS_SESSION_TOKEN, or AWS_PROFILE")
    if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
        return WarehouseError(f"lake {location}: no bucket {location.root.split('/')[0]} at {where}; create it "
                              "first (assay never creates buckets)")
    return WarehouseError(f"lake {location}: {doing} it: {_detail(text)}")


def _detail(text: str) -> str:
    """The store's reason without the SDK's request ids and the key it was asked about."""
    text = re.sub(r"\s*\(Request ID: [^)]*\)", "", text)
    for marker in ("; Details: ", " operation: "):
        if marker in text:
            text = text.split(marker, 1)[1] if marker == " operation: " else text.split(marker, 1)[0]
    return text.strip()
