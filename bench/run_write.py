"""How long a run's write transaction takes (the part that holds the warehouse lock).

    .venv/bin/python bench/run_write.py [CORPUS JUDGMENTS [--chunker document]] [--repeat N]

Computes one run (BM25 over the demo by default) once, then writes it to N fresh warehouses and
prints the median write in ms; the write includes the per-question values of the default measures
(`measure_values`) when this assay stores them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> None:
    from assay.runs.runner import RunOptions, execute_run
    from assay.store.warehouse import Warehouse

    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "judgments/demo/corpus"))
    ap.add_argument("judgments", nargs="?", default=str(ROOT / "judgments/demo/judgments.jsonl"))
    ap.add_argument("--chunker", default=None)
    ap.add_argument("--warehouse", default=None, help="a warehouse holding @corpus names (imports)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    options = RunOptions() if args.chunker is None else replace(RunOptions(), chunker=args.chunker)
    source = Warehouse.brief(args.warehouse) if args.warehouse else None
    record = execute_run(args.corpus, args.judgments, options, None, warehouse=source)
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            if args.warehouse:  # the corpus is stored there: write into a copy of it
                import shutil

                path = Path(tmp) / f"wh{i}.duckdb"
                shutil.copy(args.warehouse, path)
            else:
                path = Path(tmp) / f"wh{i}.duckdb"
                Warehouse.open(path).close()
            with Warehouse.open(path) as wh:
                start = time.perf_counter()
                from assay.runs.sinks import store_run  # rows and measure values, as a run stores them
                store_run(wh, record)
                times.append((time.perf_counter() - start) * 1000)
                n = wh.con.execute("SELECT COUNT(*) FROM information_schema.tables "
                                   "WHERE table_name = 'measure_values'").fetchall()[0][0]
                stored = wh.con.execute("SELECT COUNT(*) FROM measure_values").fetchall()[0][0] if n else 0
    print(f"{len(record.query_rows)} questions, {len(record.hits)} hits: write median "
          f"{statistics.median(times):.0f} ms (min {min(times):.0f}, max {max(times):.0f}, n={len(times)}); "
          f"{stored} measure values stored", file=sys.stdout)


if __name__ == "__main__":
    main()
