"""Start-up and end-to-end speed of the CLI, against the interpreter's own start-up as the peer.

Targets (issue #2): `assay --help` under 0.3 s; `assay demo` after install under 30 s.
Run: .venv/bin/python bench/bench_cli.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSAY = [sys.executable, "-m", "assay"]


def timed(cmd, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    python = timed([sys.executable, "-c", "pass"], 10)
    help_ = timed(ASSAY + ["--help"], 10)
    with tempfile.TemporaryDirectory() as tmp:
        demo = timed(ASSAY + ["demo", "--warehouse", str(Path(tmp) / "w.duckdb")], 3)
    print(f"python -c pass          {python * 1000:8.1f} ms  (peer: bare interpreter start-up)")
    print(f"assay --help            {help_ * 1000:8.1f} ms  ratio to python {help_ / python:5.2f}x  "
          f"target < 300 ms: {'ok' if help_ < 0.3 else 'MISSED'}")
    print(f"assay demo (end to end) {demo:8.2f} s   target < 30 s: {'ok' if demo < 30 else 'MISSED'}")


if __name__ == "__main__":
    main()
