"""Before Spark's JVM starts: a standalone master nobody answers on is named in seconds (Spark's own client gives up
after ~100 s, and assay used to blame Java), and a missing or broken Java is still named as such.

Real `assay lake` processes on a real empty lake directory; the master is a loopback port just closed (nobody
listens) or a real listening socket; "no Java" is a PATH and JAVA_HOME without one, a broken one a JAVA_HOME whose
bin/java exits at once, which PySpark really launches."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from assay.core.errors import ConfigError
from assay.store.lake.spark_preflight import JAVA_HINT, WHERE_MASTERS, check_master

BOUND_S = 60  # generous: the point is seconds, not Spark's ~100 s; never a tight timing claim


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then closed: the kernel refuses connections to it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lake_runs(tmp_path, master: str, **env):
    lake = tmp_path / "lake"
    lake.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "ASSAY_SPARK_MASTER")}
    environ.update(env)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "assay", "lake", "runs", str(lake), "--engine", "spark",
                           "--spark-master", master], capture_output=True, text=True, env=environ, cwd=tmp_path,
                          timeout=600)
    return done, time.monotonic() - started


def test_an_unreachable_master_is_named_within_seconds_not_blamed_on_java(tmp_path):
    port = closed_port()
    master = f"spark://127.0.0.1:{port}"
    done, took = lake_runs(tmp_path, master)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"error: cannot start Spark: the Spark master {master} is unreachable (127.0.0.1:{port} refused the "
        f"connection: nothing listens there); start that master, or name a running one with {WHERE_MASTERS}"]
    assert took < BOUND_S, took


def test_standby_masters_pass_when_one_listens_and_each_failure_is_named():
    first, second = closed_port(), closed_port()
    with pytest.raises(ConfigError) as caught:
        check_master(f"spark://127.0.0.1:{first},127.0.0.1:{second}")
    assert f"(127.0.0.1:{first} refused the connection: nothing listens there; 127.0.0.1:{second} refused" in str(
        caught.value)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_master(f"spark://127.0.0.1:{first},127.0.0.1:{listening.getsockname()[1]}")  # no error
    for master in ("local[2]", "yarn", "k8s://https://127.0.0.1:1", "spark://no-port"):
        check_master(master)  # not a spark://HOST:PORT: left to Spark


def test_no_java_on_path_nor_java_home_is_named_before_the_master(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    done, _ = lake_runs(tmp_path, f"spark://127.0.0.1:{closed_port()}", PATH=str(empty))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"error: cannot start Spark: no `java` found (JAVA_HOME is not set, and no `java` is on PATH). {JAVA_HINT}"]


def test_a_java_home_without_java_is_named(tmp_path):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    done, _ = lake_runs(tmp_path, "local[1]", JAVA_HOME=str(home))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"error: cannot start Spark: JAVA_HOME is {home}, which has no bin/java. {JAVA_HINT}"]


def test_a_java_that_does_not_start_still_gets_the_java_hint(tmp_path):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'Error: this is not a JVM' >&2\nexit 1\n")
    java.chmod(0o755)
    done, took = lake_runs(tmp_path, "local[1]", JAVA_HOME=str(home))
    assert (done.returncode, done.stdout) == (1, "")
    line = done.stderr.splitlines()[-1]
    assert line.startswith("error: cannot start Spark on local[1]: Java did not start (") and line.endswith(JAVA_HINT)
    assert took < BOUND_S, took
