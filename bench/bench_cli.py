"""Start-up and end-to-end speed of the CLI, each command timed against the interpreter's own start-up.

Targets (issues #2, #14): `assay --help` under 0.3 s; `assay report latest` on the demo under 0.3 s; `assay demo`
after install under 30 s; a fresh clone's `make demo` under 60 s.

    .venv/bin/python bench/bench_cli.py                      commands against `python -c pass`
    .venv/bin/python bench/bench_cli.py --before DIR         and against another version of assay, alternated
    .venv/bin/python bench/bench_cli.py --make-demo [--cold]   also `make demo` in fresh clones under /tmp

Each round runs `python -c pass` and then each command, so a command and its peer share the machine's load; the
ratio is taken within the round. Three rounds by default: min, median and max are printed, and the load average
before and after. Commands run as a user's shell runs them: the `assay` script of this interpreter's environment,
bytecode written (PYTHONDONTWRITEBYTECODE is unset), one untimed run first. `--make-demo` clones the committed HEAD
(twice by default) and times `make demo` there: it installs what the machine's caches lack (uv's and pip's), so it
is not part of a plain run; `--cold` gives it empty caches, as on a machine that never installed these packages
(everything is downloaded).

`--before DIR` times a second version of assay in the same rounds: DIR is a source tree of it (e.g. `git archive
COMMIT | tar -x -C DIR`), run by this interpreter with DIR/src first on the path, on a demo warehouse of its own
(made by its own `assay demo`, so each version reads the schema it wrote). Each command of each version runs
right after the other's, and the ratio of their median CPU seconds is printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the `assay` a user's shell runs (the console script beside this interpreter), else `python -m assay` (which adds
# runpy's ~4 ms)
SCRIPT = Path(sys.executable).with_name("assay")
ASSAY = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "assay"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


CPU: list[float] = []  # CPU seconds (user + system) of each command timed, in order


def seconds(cmd, cwd=ROOT, env=ENV) -> float:
    """Wall seconds of ``cmd``; its CPU seconds go to ``CPU`` (they depend less on the machine's load)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=cwd, env=env)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return took


def spread(values) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


CASES = {
    "assay --help": ["--help"],
    "assay report latest": ["report", "latest"],
    "assay report latest --format json": ["report", "latest", "--format", "json"],
    "assay runs": ["runs"],
    "assay show latest": ["show", "latest"],
    "assay gate latest --rule ...": ["gate", "latest", "--rule", "Success@3:doc>=0.5"],
    "assay demo (end to end)": None,  # a new warehouse each time: ingest, run, report
}
TARGETS = {"assay --help": 0.3, "assay report latest": 0.3, "assay demo (end to end)": 30}


class Version:
    """One version of assay: how to start it, and its demo warehouse."""

    def __init__(self, label: str, tmp: Path, src: Path | None = None):
        self.label, self.tmp = label, tmp
        self.env = dict(ENV)
        if src is not None:
            self.env["PYTHONPATH"] = os.pathsep.join([str(src / "src")] + [p for p in [ENV.get("PYTHONPATH")] if p])
        self.warehouse = str(tmp / f"{label}.duckdb")
        subprocess.run(ASSAY + ["demo", "--warehouse", self.warehouse], check=True, capture_output=True, env=self.env)

    def command(self, name: str, round_: int) -> list[str]:
        args = CASES[name]
        if args is None:
            return ASSAY + ["demo", "--warehouse", str(self.tmp / f"{self.label}-demo-{round_}.duckdb")]
        return ASSAY + args + ([] if name == "assay --help" else ["--warehouse", self.warehouse])


def commands(rounds: int, before: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        versions = [Version("after" if before else "this", Path(tmp))]
        if before is not None:
            versions.append(Version("before", Path(tmp), before))
        for version in versions:  # bytecode written, caches warm
            for name in CASES:
                if CASES[name] is not None:
                    subprocess.run(version.command(name, 0), capture_output=True, env=version.env)
        start = load()
        times = {(v.label, name): [] for v in versions for name in CASES}
        cpu = {key: [] for key in times}
        ratios = {key: [] for key in times}
        peer, peer_cpu = [], []
        for r in range(rounds):
            base = seconds([sys.executable, "-c", "pass"])
            peer.append(base)
            peer_cpu.append(CPU[-1])
            for name in CASES:
                for version in versions if r % 2 == 0 else versions[::-1]:  # who goes first alternates
                    took = seconds(version.command(name, r + 1), env=version.env)
                    times[version.label, name].append(took)
                    cpu[version.label, name].append(CPU[-1])
                    ratios[version.label, name].append(took / base)
        print(f"load average before {start}, after {load()}; {rounds} rounds; wall seconds min / median / max, "
              "the ratio to python -c pass in the same round, median CPU seconds\n")
        print(f"{'python -c pass (peer)':44s} {spread(peer)}   {'':22s} cpu {statistics.median(peer_cpu):.3f}")
        for name in CASES:
            for version in versions:
                key = (version.label, name)
                target = TARGETS.get(name)
                verdict = "" if target is None or version.label == "before" else (
                    f"  target < {target:g} s: {'ok' if statistics.median(times[key]) < target else 'MISSED'}")
                label = name if len(versions) == 1 else f"{name} [{version.label}]"
                print(f"{label:44s} {spread(times[key])}   {statistics.median(ratios[key]):6.1f}x python "
                      f"({min(ratios[key]):5.1f}-{max(ratios[key]):5.1f}x) cpu {statistics.median(cpu[key]):.3f}"
                      f"{verdict}")
            if len(versions) == 2:
                after, was = (statistics.median(cpu[v.label, name]) for v in versions)
                print(f"{'':44s} CPU after / before {after / was:.2f}")


def make_demo(runs: int, cold: bool) -> None:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"\nfresh clone of {head.strip()}, `make demo`{' with empty package caches' if cold else ''}:")
    took = []
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="assay-make-demo-") as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
            env = dict(ENV)
            if cold:
                env.update(UV_CACHE_DIR=str(Path(tmp) / "uv-cache"), PIP_CACHE_DIR=str(Path(tmp) / "pip-cache"))
            before = load()
            took.append(seconds(["make", "demo"], cwd=clone, env=env))
            print(f"  run {i + 1}: {took[-1]:6.1f} s  (load average before {before}, after {load()})")
    print(f"  min / median / max {spread(took)} s; target < 60 s: "
          f"{'ok' if statistics.median(took) < 60 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None,
                        help="a source tree of another version of assay, timed in the same rounds")
    parser.add_argument("--make-demo", action="store_true", help="also time `make demo` in fresh clones")
    parser.add_argument("--clones", type=int, default=2, help="fresh clones for --make-demo")
    parser.add_argument("--cold", action="store_true", help="--make-demo with empty uv and pip caches")
    args = parser.parse_args()
    commands(args.rounds, args.before)
    if args.make_demo:
        make_demo(args.clones, args.cold)


if __name__ == "__main__":
    main()
