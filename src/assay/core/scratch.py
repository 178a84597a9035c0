"""Scratch directories named for the process that owns them, so one its owner left behind can be told apart from
one still in use, and removed.

A process removes its own scratch when it ends, fails, runs out of disk space, or is stopped by SIGINT or SIGTERM
(the CLI turns both into an exception that unwinds through the ``finally`` that removes it). SIGKILL, SIGABRT, a
crash or a power cut leave it behind; the next process that makes scratch of the same kind there removes it
(``stale``). Each name carries its owner, ``PREFIX<machine>-<pid>-<start>-...``:

- ``machine``: eight hex digits of SHA-256 over the host name, the boot id and the pid namespace. A directory made
  on another host (a lake on a shared disk), before a reboot, or in another container is never judged here: its
  pids are not this machine's.
- ``pid`` and ``start``: the process and when it started (clock ticks after boot, field 22 of /proc/PID/stat). The
  owner is gone when no process has that pid, or the one that has it started at another time (the pid was reused).
  Where /proc is absent (macOS) the start is written 0 and only the pid is checked: a reused pid keeps a directory,
  never the other way round.

A name without an owner (made by an assay before this one) is never removed: nothing says its owner is gone.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path

_OWNER = re.compile(r"([0-9a-f]{8})-([0-9]+)-([0-9]+)-(.*)", re.S)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def machine() -> str:
    """Eight hex digits naming this host, boot and pid namespace: the pids compared here are valid within it."""
    seen = "\0".join((socket.gethostname(), _read("/proc/sys/kernel/random/boot_id"), _pid_namespace()))
    return hashlib.sha256(seen.encode()).hexdigest()[:8]


def started(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks after boot; None when there is no such process; 0 where /proc
    does not say (not Linux)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:  # another user's process: it exists
            pass
        return 0
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    # the command name (field 2) is in parentheses and may hold spaces and ')': count fields after the last ')'
    return int(stat.rsplit(")", 1)[1].split()[19])


def owner() -> str:
    """This process as a scratch name records it: ``<machine>-<pid>-<start>``."""
    pid = os.getpid()
    return f"{machine()}-{pid}-{started(pid) or 0}"


def name(prefix: str) -> str:
    """The start of a scratch name for this process: ``prefix`` then its owner and a dash."""
    return f"{prefix}{owner()}-"


def alive(pid: int, start: int) -> bool:
    """Whether the process that made a scratch name (``pid``, started at ``start``) still runs."""
    now = started(pid)
    if now is None:
        return False
    return start == 0 or now == 0 or now == start


def stale(parent: Path, prefix: str) -> list[tuple[Path, str]]:
    """The entries of ``parent`` named ``prefix`` + an owner of this machine that no longer runs, each with what
    its name holds after the owner (a run id, a random part). Entries of other machines, of processes still
    running, and names without an owner are not listed."""
    here, found = machine(), []
    try:
        entries = os.listdir(parent)
    except OSError:
        return []
    for entry in entries:
        if not entry.startswith(prefix):
            continue
        parsed = _OWNER.fullmatch(entry[len(prefix):])
        if parsed is None or parsed.group(1) != here:
            continue
        if not alive(int(parsed.group(2)), int(parsed.group(3))):
            found.append((Path(parent) / entry, parsed.group(4)))
    return found
