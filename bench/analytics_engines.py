"""The analytics expressions on both lake engines: `history` (nDCG@10, slice form=gap) and the paired rows of
two runs (nDCG@10, Success@3, every slice) through DuckDB and through Spark (Ibis's PySpark backend), with
the wall time of each and whether the outputs are equal. Writes a two-run demo lake first when LAKE is absent.

    .venv/bin/python bench/analytics_engines.py [LAKE]     (default /tmp/assay-analytics-lake)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "judgments" / "demo"


def main() -> None:
    from assay.cli import cli
    from assay.verdicts.comparison import paired_rows
    from assay.store.lake import open_lake
    from assay.measures.registry import parse_measure
    from assay.verdicts.regression import history

    lake = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/assay-analytics-lake")
    if not lake.exists():
        for size in (400, 800):
            out = CliRunner().invoke(cli, ["run", "--corpus", str(DEMO / "corpus"), "--judgments",
                                           str(DEMO / "judgments.jsonl"), "--chunk-size", str(size),
                                           "--lake", str(lake)], catch_exceptions=False)
            assert out.exit_code == 0, out.output
    measures = [parse_measure("nDCG@10"), parse_measure("Success@3")]
    results = {}
    for engine in ("duckdb", "spark"):
        start = time.perf_counter()
        with open_lake(lake, engine=engine) as reader:
            h = history(reader, "bm25", "nDCG@10", None, "form=gap")
            a, b = ({"run_id": p["run_id"]} for p in h["points"][:2])
            rows = paired_rows(reader, a, b, measures, slices=True, seed=0)
        results[engine] = json.dumps([h["points"], rows], default=str, sort_keys=True)
        print(f"{engine:<7} {time.perf_counter() - start:6.1f} s  {len(h['points'])} history points, "
              f"{len(rows)} paired rows")
    print("identical on both engines:", results["duckdb"] == results["spark"])


if __name__ == "__main__":
    main()
