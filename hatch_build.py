"""Build hook: compile assay's C code when a C compiler and Python's headers are at hand, as `make install`
(pip install -e .) or building a wheel runs it. Two modules, each with a pure-Python (and DuckDB) path that
computes the same results without it:

- the recursive chunker (src/assay/inputs/chunking/_recursive.c); without it the chunker computes the same spans
  in Python, 4 to 30 times slower (docs/benchmarks.md);
- eval-trec's reader (src/assay/measures/_trec_read.c); without it DuckDB reads the files and numpy ranks the run,
  the same values at several times the CPU time (docs/benchmarks.md).

Without a compiler, or if one module fails to compile, the install goes on and says so. Each module lands
beside its source, so an editable install imports it; a wheel carries it. It records the SHA-256 of the
source it was built from, and its Python side uses it only while that source is unchanged: after editing a
C file, install again.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # tests/measures/test_trec_read_c.py compiles the C code with compile_extension, where hatchling
    # is absent
    BuildHookInterface = object

# source -> what runs instead when it is not built
SOURCES = {
    Path("src", "assay", "inputs", "chunking", "_recursive.c"): "the recursive chunker runs in Python (same spans, slower)",
    Path("src", "assay", "measures", "_trec_read.c"): "eval-trec reads files with DuckDB (same values, slower)",
}
# Only the reader starts threads of its own.
FLAGS = {Path("src", "assay", "measures", "_trec_read.c"): ["-pthread"]}


def compile_extension(root: Path, source: Path = next(iter(SOURCES))) -> Path | None:
    """The built module's path, or None (the reason printed) when it could not be built."""
    fallback = SOURCES[source]
    source = root / source
    suffix, linker = sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths()["include"]
    if not suffix or not linker:
        return _skip(source, fallback, "this Python does not say how to link an extension module (no LDSHARED)")
    if not Path(include, "Python.h").exists():
        return _skip(source, fallback,
                     f"Python's C headers are missing ({include}/Python.h; on Debian: apt-get install python3-dev)")
    target = source.with_name(source.stem + suffix)
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    command = [*shlex.split(linker), "-O2", "-fPIC", *FLAGS.get(source.relative_to(root), []), f"-I{include}",
               f'-DASSAY_SOURCE_SHA256="{digest}"', str(source), "-o", str(partial)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _skip(source, fallback, f"{command[0]} could not run ({exc})")
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return _skip(source, fallback, f"{' '.join(command)} failed:\n{done.stderr.strip()[-2000:]}")
    os.replace(partial, target)
    return target


def _skip(source: Path, fallback: str, reason: str) -> None:
    print(f"assay: {source.name} is not built, so {fallback}: {reason}", file=sys.stderr)
    return None


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        built = [path for source in SOURCES if (path := compile_extension(Path(self.root), source)) is not None]
        if not built:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        build_data["artifacts"].extend(path.relative_to(self.root).as_posix() for path in built)
