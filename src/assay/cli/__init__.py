"""The `assay` command line: a thin shell over the library. Heavy imports happen inside commands.

Importing this package registers every command on `cli` (assay.cli.base holds the root group and what the
commands share; one module per group of commands holds them); `main` is the `assay` script."""

from __future__ import annotations

import click

# each module registers its commands on `cli` as it is imported
from assay.cli import (  # noqa: F401
    answers, ingest, judgments, lake, measures, reports, runs, start, verdicts, warehouse,
)
from assay.cli.base import EXIT_CODES, AssayCommand, AssayGroup, Number, cli, setting

__all__ = ["EXIT_CODES", "AssayCommand", "AssayGroup", "Number", "cli", "main", "setting"]


def _interrupted_outside_a_command(signum, frame):
    click.echo("interrupted; nothing was written", err=True)
    raise SystemExit(130)  # click turns KeyboardInterrupt into "Aborted!" and exit 1


def main():
    import os
    import signal

    # numpy's BLAS threads wait on each other when the cores are busy: the small matrix products of intervals and
    # paired tests took 20x longer with two threads on a loaded 2-core machine (set it to override)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    signal.signal(signal.SIGINT, _interrupted_outside_a_command)  # commands install their own (AssayGroup)
    try:
        cli(prog_name="assay")
    finally:
        import gc

        # the process ends now: the collector's passes at exit over every object of what was imported (numpy,
        # scipy's ufuncs, DuckDB, click) cost a report ~30 ms of its ~300, and the memory goes back with the
        # process. Objects are still freed (reference counting), files closed and atexit hooks run; the command
        # closed its warehouse and files itself.
        gc.freeze()
