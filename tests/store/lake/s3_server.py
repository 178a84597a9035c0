"""A real S3-protocol server on loopback for the lake's object-store tests: moto's standalone server
(``moto.server.ThreadedMotoServer``, a werkzeug HTTP server in a thread of the test process), started and stopped
by the tests, with one bucket. Writers in child processes reach it over loopback as any S3 client does."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager

import pytest

BUCKET = "assay-lake"
KEYS = {"AWS_ACCESS_KEY_ID": "assay-test", "AWS_SECRET_ACCESS_KEY": "assay-test-secret"}


class S3Server:
    """The running server: ``endpoint`` (``http://127.0.0.1:PORT``), ``env`` (what a client process needs: the
    endpoint, a region and keys, and no credential file or instance metadata of this machine's), ``lake()`` (a
    fresh ``s3://`` URL in the bucket)."""

    def __init__(self, endpoint: str, home: str):
        self.endpoint = endpoint
        self.env = {**KEYS, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
                    "AWS_SHARED_CREDENTIALS_FILE": os.path.join(home, "no-credentials"),
                    "AWS_CONFIG_FILE": os.path.join(home, "no-config"), "AWS_EC2_METADATA_DISABLED": "true"}

    def lake(self) -> str:
        return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}/lake"

    def fs(self):
        from pyarrow import fs as pafs

        return pafs.S3FileSystem(access_key=KEYS["AWS_ACCESS_KEY_ID"], secret_key=KEYS["AWS_SECRET_ACCESS_KEY"],
                                 region="us-east-1", endpoint_override=self.endpoint, scheme="http",
                                 allow_bucket_creation=True)

    def keys(self, lake: str) -> list[str]:
        """Every object under ``lake`` (an s3:// URL), as paths below it."""
        from pyarrow import fs as pafs

        root = lake.removeprefix("s3://")
        infos = self.fs().get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        return sorted(i.path[len(root) + 1:] for i in infos if i.type == pafs.FileType.File)


@contextmanager
def s3_server(home: str):
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        s3 = S3Server(f"http://{host}:{port}", home)
        s3.fs().create_dir(BUCKET)
        yield s3
    finally:
        server.stop()


# The fixtures of every module that uses the server (import them there: `from s3_server import aws, s3`).
@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """One server for the module, its files under a directory of its own."""
    with s3_server(str(tmp_path_factory.mktemp("aws-home"))) as server:
        yield server


@pytest.fixture
def aws(s3, monkeypatch):
    """This process's environment pointed at the server (for in-process commands and readers)."""
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    return s3
