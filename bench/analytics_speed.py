"""Time `assay history`, `assay compare` and `assay regress` on a warehouse of N demo runs (bm25, chunk sizes
300, 320, ...), each command run REPEAT times in a fresh process; prints the median wall and CPU seconds.

    .venv/bin/python bench/analytics_speed.py [--runs 30] [--repeat 3] [--warehouse PATH] [--src DIR]
        [--unstored]

--src: the src/ directory of another checkout to time (e.g. one with the code before assay.analytics);
--unstored: empty measure_values first (every value then comes from the measure SQL, as for old runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "judgments" / "demo"


def build(path: Path, n: int) -> None:
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    with Warehouse.open(path) as wh:
        for i in range(n):
            run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions(chunk_size=300 + 20 * i))


def timed(args: list[str], env: dict) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "assay", *args], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 7):
        raise SystemExit(f"assay {' '.join(args)} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warehouse", type=Path, default=Path("/tmp/assay-analytics-bench.duckdb"))
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--unstored", action="store_true")
    opts = parser.parse_args()
    if not opts.warehouse.exists():
        build(opts.warehouse, opts.runs)
    import duckdb

    con = duckdb.connect(str(opts.warehouse))
    if opts.unstored:
        con.execute("DELETE FROM measure_values")
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at, run_id").fetchall()]
    stored = con.execute("SELECT COUNT(*) FROM measure_values").fetchall()[0][0]
    con.close()
    env = {**os.environ, "PYTHONPATH": str(opts.src)}
    w = ["--warehouse", str(opts.warehouse)]
    commands = {
        "history nDCG@10": ["history", "--pipeline", "bm25", "--metric", "nDCG@10", *w],
        "history SpanRecall@1000tok form=gap": ["history", "--pipeline", "bm25", "--metric", "SpanRecall@1000tok",
                                                "--slice", "form=gap", *w],
        "compare first last": ["compare", runs[0], runs[-1], *w],
        "regress last --baseline best": ["regress", runs[-1], "--baseline", "best", "--max-drop", "nDCG@10=0.01",
                                         "--max-drop", "Success@3:doc=0.02", *w],
    }
    print(f"{len(runs)} runs, {stored} stored values, src {opts.src}, median of {opts.repeat}")
    for name, args in commands.items():
        walls, cpus = zip(*(timed(args, env) for _ in range(opts.repeat)))
        print(f"  {name:<38} wall {statistics.median(walls):6.2f} s   cpu {statistics.median(cpus):6.2f} s")


if __name__ == "__main__":
    main()
