"""What must hold before assay starts Spark's JVM, each checked in a moment and refused in one line naming it.

- Java: Spark's launcher runs ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else ``java`` on PATH; without it the
  JVM never starts.
- A standalone master (``spark://HOST:PORT``, or ``spark://H1:P1,H2:P2`` for masters on standby) must accept a
  TCP connection. Spark's own client does not check: it retries registering with the master three times, 20 s
  apart (hard-coded in StandaloneAppClient), then gives up after about 100 s with a message that names neither the
  master nor the reason. A port nobody listens on is refused at once; a host that drops packets is given
  ``MASTER_WAIT_S``. Other masters (``local[*]``, ``yarn``, ``k8s://...``) are left to Spark.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from assay.core.errors import ConfigError

JAVA_HINT = ("Apache Spark needs Java 17: install it (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; "
             "macOS: `brew install openjdk@17`) and put `java` on PATH or set JAVA_HOME")
MASTER_WAIT_S = 5.0  # how long a master's port may take to accept a connection: a LAN or cloud round trip is ms
WHERE_MASTERS = "--spark-master, [lake] spark_master in assay.toml, or ASSAY_SPARK_MASTER"


def check_java() -> str:
    """The java Spark will run; a ConfigError saying how to install Java 17 when there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / ("java.exe" if os.name == "nt" else "java")
        if java.is_file() and os.access(java, os.X_OK):
            return str(java)
        raise ConfigError(f"cannot start Spark: JAVA_HOME is {home}, which has no bin/java. {JAVA_HINT}")
    java = shutil.which("java")
    if java is None:
        raise ConfigError(f"cannot start Spark: no `java` found (JAVA_HOME is not set, and no `java` is on PATH). "
                          f"{JAVA_HINT}")
    return java


def check_master(master: str) -> None:
    """A ``spark://`` master must accept a connection on one of its HOST:PORTs, else a ConfigError naming the URL
    and why each address failed. A URL Spark would not parse is left to Spark's own error."""
    if not master.startswith("spark://"):
        return
    addresses = []
    for address in master[len("spark://"):].split(","):
        host, colon, port = address.strip().rpartition(":")
        if not (colon and host and port.isdigit()):
            return
        addresses.append((host.strip("[]"), int(port)))  # [::1]:7077 is an IPv6 host
    failures = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=MASTER_WAIT_S).close()
            return
        except OSError as exc:
            failures.append(f"{host}:{port} {_why(exc)}")
    raise ConfigError(f"cannot start Spark: the Spark master {master} is unreachable ({'; '.join(failures)}); "
                      f"start that master, or name a running one with {WHERE_MASTERS}")


def _why(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return "is not a host name this machine can resolve"
    if isinstance(exc, TimeoutError):
        return f"did not answer within {MASTER_WAIT_S:g} s"
    if isinstance(exc, ConnectionRefusedError):
        return "refused the connection: nothing listens there"
    return f"cannot be reached: {exc.strerror or exc}"


def start_failure(master: str, exc: BaseException) -> ConfigError:
    """The one line for a JVM that did not start or a SparkContext that did not come up: the Java hint only when
    the JVM itself did not start (PySpark's JAVA_GATEWAY_EXITED), the master named otherwise."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        return ConfigError(f"cannot start Spark on {master}: Java did not start ({first}). {JAVA_HINT}")
    return ConfigError(f"cannot start Spark on {master}: {first}")
