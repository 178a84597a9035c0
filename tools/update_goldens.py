"""Rewrite the demo report's golden snapshots (tests/fixtures/golden/) after an intended change: `make goldens`.

    .venv/bin/python tools/update_goldens.py [--into DIR]

Runs the demo golden set into a scratch warehouse, renders the snapshots exactly as tests/project/test_demo.py
compares them (tests/demo_snapshots.py), writes each one that changed and names it. Review the diff and
commit it. `make test` and CI never run this: a test that rewrote its own snapshot would compare it with
itself and could not fail.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from demo_snapshots import GOLDEN, SNAPSHOTS, demo_report  # noqa: E402


def write_snapshots(report: dict, into: Path) -> list[str]:
    """Write each snapshot of ``report`` into ``into``; the names of those whose text changed (or were new)."""
    into.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, render in SNAPSHOTS.items():
        path = into / name
        text = render(report)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(name)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=GOLDEN, help=f"where the snapshots go (default: {GOLDEN})")
    args = parser.parse_args(argv)
    from assay.store.warehouse import Warehouse

    with tempfile.TemporaryDirectory(prefix="assay-goldens-") as scratch:
        with Warehouse.open(Path(scratch) / "w.duckdb") as wh:
            changed = write_snapshots(demo_report(wh), args.into)
    for name in changed:
        print(f"rewrote {args.into / name}")
    print(f"{len(changed)} of {len(SNAPSHOTS)} snapshot(s) changed" + ("; review the diff and commit it" if changed
                                                                       else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
