"""Start-up and end-to-end speed of the CLI, each command timed against the interpreter's own start-up.

Targets (issues #2, #14): `assay --help` under 0.3 s; `assay report latest` on the demo under 0.3 s; `assay demo`
after install under 30 s; a fresh clone's `make demo` under 60 s.

    .venv/bin/python bench/bench_cli.py                      commands against `python -c pass`
    .venv/bin/python bench/bench_cli.py --make-demo [--cold]   also `make demo` in fresh clones under /tmp

Each round runs `python -c pass` and then each command, so a command and its peer share the machine's load; the
ratio is taken within the round. Three rounds by default: min, median and max are printed, and the load average
before and after. Commands run as a user's shell runs them: bytecode written (PYTHONDONTWRITEBYTECODE is unset),
one untimed run first. `--make-demo` clones the committed HEAD (twice by default) and times `make demo` there: it
installs what the machine's caches lack (uv's and pip's), so it is not part of a plain run; `--cold` gives it empty
caches, as on a machine that never installed these packages (everything is downloaded).
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
ASSAY = [sys.executable, "-m", "assay"]
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


def commands(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wh = str(Path(tmp) / "w.duckdb")
        subprocess.run(ASSAY + ["demo", "--warehouse", wh], check=True, capture_output=True, env=ENV)
        cases = {
            "assay --help": ASSAY + ["--help"],
            "assay report latest": ASSAY + ["report", "latest", "--warehouse", wh],
            "assay report latest --format json": ASSAY + ["report", "latest", "--format", "json", "--warehouse", wh],
            "assay runs": ASSAY + ["runs", "--warehouse", wh],
            "assay show latest": ASSAY + ["show", "latest", "--warehouse", wh],
            "assay gate latest --rule ...": ASSAY + ["gate", "latest", "--rule", "Success@3:doc>=0.5",
                                                     "--warehouse", wh],
            "assay demo (end to end)": None,  # a new warehouse each time: ingest, run, report
        }
        for cmd in cases.values():  # bytecode written, caches warm
            if cmd is not None:
                subprocess.run(cmd, capture_output=True, env=ENV)
        before = load()
        times, cpu = {name: [] for name in cases}, {name: [] for name in cases}
        peer, peer_cpu, ratios = [], [], {name: [] for name in cases}
        for r in range(rounds):
            base = seconds([sys.executable, "-c", "pass"])
            peer.append(base)
            peer_cpu.append(CPU[-1])
            for name, cmd in cases.items():
                cmd = cmd or ASSAY + ["demo", "--warehouse", str(Path(tmp) / f"demo-{r}.duckdb")]
                took = seconds(cmd)
                times[name].append(took)
                cpu[name].append(CPU[-1])
                ratios[name].append(took / base)
        print(f"load average before {before}, after {load()}; {rounds} rounds; wall seconds min / median / max, "
              "the ratio to python -c pass in the same round, median CPU seconds\n")
        print(f"{'python -c pass (peer)':36s} {spread(peer)}   {'':22s} cpu {statistics.median(peer_cpu):.3f}")
        for name in cases:
            target = {"assay --help": 0.3, "assay report latest": 0.3, "assay demo (end to end)": 30}.get(name)
            verdict = "" if target is None else (
                f"  target < {target:g} s: {'ok' if statistics.median(times[name]) < target else 'MISSED'}")
            print(f"{name:36s} {spread(times[name])}   {statistics.median(ratios[name]):6.1f}x python "
                  f"({min(ratios[name]):5.1f}-{max(ratios[name]):5.1f}x) cpu {statistics.median(cpu[name]):.3f}"
                  f"{verdict}")


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
    parser.add_argument("--make-demo", action="store_true", help="also time `make demo` in fresh clones")
    parser.add_argument("--clones", type=int, default=2, help="fresh clones for --make-demo")
    parser.add_argument("--cold", action="store_true", help="--make-demo with empty uv and pip caches")
    args = parser.parse_args()
    commands(args.rounds)
    if args.make_demo:
        make_demo(args.clones, args.cold)


if __name__ == "__main__":
    main()
