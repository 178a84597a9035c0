"""How much a pip install of assay puts on disk and how long it takes (docs/benchmarks.md, "Install size and time").

    python bench/install_size.py SPEC [SPEC ...] [--repeat N] [--warmup]

SPEC is what `pip install` is given: a built wheel, with extras if any (``dist/assay-0.1.0-*.whl[html]``), or a
checkout's folder. Several SPECs are installed in turn in each round (A B A B ...), so a load that comes and
goes on a shared machine falls on each alike. Each repeat creates a fresh virtual environment in a temporary folder (with this Python's
``venv``, pip included), times ``pip install SPEC`` in it, and measures its site-packages folder with ``du``
(pip and setuptools, which every venv holds, are counted apart). pip uses its own cache as configured
(``pip cache dir``); ``--warmup`` installs once first, not counted, so every counted repeat finds the cache warm.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENV_OWN = ("pip", "setuptools", "_distutils_hack", "distutils-precedence.pth")


def one(spec: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="assay-install-") as tmp:
        venv = Path(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        started = time.perf_counter()
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", spec], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"pip install {spec} failed:\n{done.stderr[-3000:]}")
        seconds = time.perf_counter() - started
        site = next(venv.glob("lib/python*/site-packages"))
        total = _du(site)
        own = sum(_du(p) for p in site.iterdir() if p.name in VENV_OWN or p.name.startswith(("pip-", "setuptools-")))
        dists = sorted(p.name.split("-")[0] for p in site.glob("*.dist-info"))
        dists = [d for d in dists if d.lower() not in ("pip", "setuptools")]
        return {"seconds": seconds, "mib": (total - own) / 2**20, "packages": len(dists), "dists": dists}


def _du(path: Path) -> int:
    """Bytes on disk (``du -sb``: apparent sizes, so the figure does not depend on the file system's blocks)."""
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="+")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--warmup", action="store_true", help="install once first, uncounted, to warm pip's cache")
    parser.add_argument("--list", action="store_true", help="print the distributions installed")
    args = parser.parse_args()
    if args.warmup:
        for spec in args.spec:
            one(spec)
    runs: dict[str, list] = {spec: [] for spec in args.spec}
    for _ in range(args.repeat):
        for spec in args.spec:
            runs[spec].append(one(spec))
    for spec, done in runs.items():
        seconds = [r["seconds"] for r in done]
        mib = [r["mib"] for r in done]
        print(f"{spec}: {done[0]['packages']} packages besides pip, {statistics.median(mib):.0f} MiB of "
              f"site-packages ({statistics.median(mib) * 2**20 / 1e6:.0f} MB; pip's own excluded); pip install "
              f"{statistics.median(seconds):.1f} s median ({', '.join(f'{s:.1f}' for s in seconds)} s over "
              f"{len(done)} runs, pip's cache warm)")
        if args.list:
            print(" ".join(done[0]["dists"]))


if __name__ == "__main__":
    main()
