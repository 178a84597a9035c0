"""Build hook: compile the recursive chunker's C code (src/assay/chunking/_recursive.c) when a C compiler
and Python's headers are at hand, as `make install` (pip install -e .) or building a wheel runs it.

Without them, or if compiling fails, the install goes on and says so: the chunker then computes the same
spans in Python, 4 to 30 times slower (docs/benchmarks.md). The module lands beside its source, so an
editable install imports it; a wheel carries it. It records the SHA-256 of the source it was built from,
and recursive.py uses it only while that source is unchanged: after editing the C file, install again.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("src", "assay", "chunking", "_recursive.c")


def compile_extension(root: Path) -> Path | None:
    """The built module's path, or None (the reason printed) when it could not be built."""
    source = root / SOURCE
    suffix, linker = sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths()["include"]
    if not suffix or not linker:
        return _skip("this Python does not say how to link an extension module (no LDSHARED)")
    if not Path(include, "Python.h").exists():
        return _skip(f"Python's C headers are missing ({include}/Python.h; on Debian: apt-get install python3-dev)")
    target = source.with_name("_recursive" + suffix)
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    command = [*shlex.split(linker), "-O2", "-fPIC", f"-I{include}", f'-DASSAY_SOURCE_SHA256="{digest}"',
               str(source), "-o", str(partial)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _skip(f"{command[0]} could not run ({exc})")
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return _skip(f"{' '.join(command)} failed:\n{done.stderr.strip()[-2000:]}")
    os.replace(partial, target)
    return target


def _skip(reason: str) -> None:
    print(f"assay: the recursive chunker's C code is not built, so it runs in Python (same spans, slower): "
          f"{reason}", file=sys.stderr)
    return None


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        built = compile_extension(Path(self.root))
        if built is None:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        build_data["artifacts"].append(built.relative_to(self.root).as_posix())
