"""Install locked requirements into the project's virtual environment, with uv where it can be had, else pip.

    PYTHON tools/install.py VENV --create                    the environment, for PYTHON (with pip in it,
                                                            which `assay models install` uses)
    PYTHON tools/install.py VENV -r requirements.lock [...]  the pinned packages
    PYTHON tools/install.py VENV --editable .                the project itself, without dependencies

uv installs the same pinned versions as pip from the same places: the package indexes, find-links directories,
constraints and certificates this machine's pip is configured with (`pip config list`, which includes the PIP_*
variables) are handed to uv, and each package is taken from whichever index has the best match, as pip does.
A pip setting uv cannot be told about, no uv (not on PATH, not in the cache and not installable with pip), or
a uv that fails makes the install fall back to pip. Set ASSAY_INSTALLER=pip to use pip regardless.

Packages are byte-compiled on install, as pip does: a command's start-up then never compiles a dependency.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

UV = "uv==0.13.9"  # fetched with pip, once per machine, when no uv is on PATH
# beside pip's and uv's own caches, so a fresh clone finds it: $XDG_CACHE_HOME/assay/uv-0.13.9/bin/uv
TOOLS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "assay" / UV.replace("==", "-")

# pip settings that change nothing uv installs: printing, pip's own checks, pip's cache
HARMLESS = {"disable-pip-version-check", "no-color", "progress-bar", "quiet", "verbose", "root-user-action",
            "no-input", "cache-dir", "no-cache-dir", "log", "no-python-version-warning", "break-system-packages"}


def pip_settings(*pythons: str) -> dict[str, str]:
    """pip's configuration for `pip install`, read by the first of ``pythons`` that has pip (see ``parse``)."""
    for python in pythons:
        done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True)
        if done.returncode == 0:
            return parse(done.stdout)
    return {}


def parse(config_list: str) -> dict[str, str]:
    """`pip config list` as {key: value}, as `pip install` sees it: PIP_* variables (``:env:.key``) over
    ``install.key`` over ``global.key``."""
    layers: dict[str, dict[str, str]] = {"global": {}, "install": {}, ":env:": {}}
    for line in config_list.splitlines():
        name, _, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if section in layers and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            layers[section][key] = value[1:-1]
    return {**layers["global"], **layers["install"], **layers[":env:"]}


def uv_arguments(settings: dict[str, str]) -> tuple[list[str], list[str], dict[str, str]] | None:
    """uv's index options, its install-only options (constraints) and its environment for pip's settings;
    None when a setting has no uv counterpart."""
    indexes, constraints, env = ["--index-strategy", "unsafe-best-match"], [], {}  # pip: best version anywhere
    for key, value in settings.items():
        items = value.split()
        if key == "index-url":
            indexes += ["--default-index", value]
        elif key == "extra-index-url":
            indexes += [a for item in items for a in ("--index", item)]
        elif key == "find-links":
            indexes += [a for item in items for a in ("--find-links", item)]
        elif key == "trusted-host":
            indexes += [a for item in items for a in ("--allow-insecure-host", item)]
        elif key == "no-index":
            if value.lower() in ("1", "true", "yes", "on"):
                indexes.append("--no-index")
        elif key == "constraint":
            constraints += [a for item in items for a in ("--constraints", item)]
        elif key == "cert":
            env["SSL_CERT_FILE"] = value
        elif key == "client-cert":
            env["SSL_CLIENT_CERT"] = value
        elif key in ("timeout", "default-timeout"):
            env["UV_HTTP_TIMEOUT"] = value
        elif key == "proxy":
            env["HTTP_PROXY"] = env["HTTPS_PROXY"] = value
        elif key not in HARMLESS:
            print(f"tools/install.py: pip setting {key!r} has no uv counterpart here; installing with pip",
                  file=sys.stderr)
            return None
    return indexes, constraints, env


def find_uv(python: str) -> str | None:
    """uv on PATH, else the pinned uv in the cache (installed there with pip the first time), else None."""
    uv = TOOLS / "bin" / "uv"
    if shutil.which("uv") or uv.is_file():
        return shutil.which("uv") or str(uv)
    # into a fresh directory, then renamed: two installs at once leave one whole copy
    TOOLS.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=TOOLS.name + ".", dir=TOOLS.parent))
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", "--target", str(staging), UV],
                          stdout=subprocess.DEVNULL)
    if done.returncode == 0 and (staging / "bin" / "uv").is_file():
        try:
            staging.rename(TOOLS)
        except OSError:  # another install put it there first
            pass
    shutil.rmtree(staging, ignore_errors=True)
    return str(uv) if uv.is_file() else None


def main(argv: list[str]) -> int:
    venv, action = Path(argv[0]), argv[1:]
    target, base = str(venv / "bin" / "python"), sys.executable
    uv = None if os.environ.get("ASSAY_INSTALLER") == "pip" else find_uv(base)
    mapped = uv_arguments(pip_settings(base, target)) if uv else None
    if mapped:
        indexes, constraints, extra = mapped
        env = {**os.environ, **extra, "UV_COMPILE_BYTECODE": "1"}
        if action[:1] == ["--create"]:
            cmd = [uv, "venv", "--quiet", "--seed", "--no-python-downloads", "--python", base, *indexes, str(venv)]
        elif action[:1] == ["--editable"]:
            cmd = [uv, "pip", "install", "--quiet", "--python", target, *indexes, "--no-deps", "-e", *action[1:]]
        else:
            cmd = [uv, "pip", "install", "--quiet", "--python", target, *indexes, *constraints, *action]
        if subprocess.run(cmd, env=env).returncode == 0:
            return 0
        print(f"tools/install.py: {' '.join(cmd[:3])} failed; installing with pip", file=sys.stderr)
    if action[:1] == ["--create"]:
        return subprocess.run([base, "-m", "venv", "--clear", str(venv)]).returncode
    pip = [target, "-m", "pip", "install", "--quiet"]
    if action[:1] == ["--editable"]:
        return subprocess.run([*pip, "--no-deps", "-e", *action[1:]]).returncode
    return subprocess.run([*pip, *action]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
