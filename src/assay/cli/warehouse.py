"""Commands over the warehouse itself: `runs`, `tag` (names of runs), `sql` (one read-only statement), `upgrade`
(its schema), `snapshot` (the read-only copy BI tools read)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import Number, cli, load_project, warehouse_option
from assay.cli.sources import print_runs, runs_format_option
from assay.core.limits import SQL


@cli.command()
@runs_format_option
@warehouse_option
def runs(fmt, warehouse_path):
    """List the runs in the warehouse, newest first: kind (run, rescore, revalidation), status, pipeline,
    chunker, calibration and answer stage, corpus and judgments."""
    from assay.store.warehouse import Warehouse

    print_runs(lambda: Warehouse.open(warehouse_path, read_only=True), fmt)


@cli.command()
@click.argument("run_ref", metavar="RUN", required=False)
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help="Move NAME to RUN when it names another run.")
@click.option("--delete", "delete_name", default=None, metavar="NAME", help="Take NAME off its run (the run is kept).")
@warehouse_option
def tag(run_ref, name, force, delete_name, warehouse_path):
    """Give RUN the name NAME, so any command can name the run by it: `assay report baseline-2026-12`.

    RUN is any reference (latest, latest~N, previous, an id, a name, a unique part of an id). A name names one
    run; one naming another run moves only with --force. A name starts with a letter and holds letters, digits
    and . _ - ; latest, previous, best and hex digits alone are refused (they read as run references)."""
    from assay.store.run_refs import tag as give, untag
    from assay.store.warehouse import Warehouse

    if delete_name is not None:
        if run_ref is not None:
            raise click.UsageError("--delete NAME takes no RUN or NAME arguments")
        with Warehouse.open(warehouse_path) as wh:
            run_id = untag(wh, delete_name)
        click.echo(f"deleted name {delete_name} (it named run {run_id})")
        return
    if name is None:
        raise click.UsageError("give RUN and NAME (assay tag latest baseline), or --delete NAME")
    with Warehouse.open(warehouse_path) as wh:
        run_id, before = give(wh, run_ref, name, force=force)
    if before == run_id:
        click.echo(f"run {run_id} is already named {name}")
    else:
        click.echo(f"moved name {name} from run {before} to run {run_id}" if before else f"named run {run_id} {name}")


@cli.command()
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--timeout", "timeout_s", type=Number(SQL["timeout_s"]), default=None,
              help="Seconds the command may take, from its start to the last row printed, before the query is "
                   "stopped (exit 1; default: [sql] timeout_s in assay.toml, else 30).")
@click.option("--max-rows", type=Number(SQL["max_rows"]), default=None,
              help="Rows printed at most; a note on stderr says when the query gave more (default: [sql] max_rows "
                   "in assay.toml, else 10000).")
@click.option("--memory-mb", type=Number(SQL["memory_mb"]), default=None,
              help="Memory DuckDB may use for the query, in MB; past it the query stops (exit 1; default: [sql] "
                   "memory_mb in assay.toml, else 2048).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration (default: the nearest assay.toml, here or above).")
@warehouse_option
def sql(query, fmt, timeout_s, max_rows, memory_mb, config_path, warehouse_path):
    """Run one read-only SQL statement against the warehouse (tables and views: see docs/warehouse.md).

    Sandboxed: the warehouse opens read-only, no other file is read or written (COPY, EXPORT, read_text,
    glob, ATTACH), no extension is installed or loaded, settings are locked. Bounded: --timeout, --memory-mb,
    --max-rows. Refused statements name why (exit 1); Ctrl-C stops the query (exit 130)."""
    from assay.inputs.settings import SQL_DEFAULTS
    from assay.store.sqlshell import run_sql

    given = {"timeout_s": timeout_s, "max_rows": max_rows, "memory_mb": memory_mb}
    table = load_project(config_path).get("sql", {}) if None in given.values() else {}
    bounds = {k: v if v is not None else table.get(k, SQL_DEFAULTS[k]) for k, v in given.items()}
    click.echo(run_sql(warehouse_path, query, fmt, **bounds), nl=False)


@cli.command()
@warehouse_option
def upgrade(warehouse_path):
    """Upgrade the warehouse to this assay's schema (its numbered migrations, applied in one transaction).

    Commands that only read (report, compare, show, runs, export, gate, ...) never write to the warehouse, so
    they refuse one of an older schema and name this command; writing commands (run, ingest, tag, ...) upgrade
    it themselves. An up-to-date warehouse is left as it is. An older assay cannot read the upgraded file."""
    from assay.store.warehouse import Warehouse

    path, before, after = Warehouse.upgrade(warehouse_path)
    if before == after:
        click.echo(f"warehouse {path} is up to date (schema version {after})")
    else:
        click.echo(f"upgraded warehouse {path} from schema version {before} to {after}")


@cli.command()
@warehouse_option
def snapshot(warehouse_path):
    """Publish the read-only copy of the warehouse that BI tools connect to, <name>-bi.duckdb beside it, now.

    Every command that stores a run publishes it after the run where [warehouse] snapshot = true in assay.toml (or
    with --snapshot); this one publishes on demand: after `assay tag`, or in a project that keeps it off. The copy is
    written under a temporary name and renamed into place: a BI tool connected to the old one keeps reading it,
    a new connection reads the new one, and no BI reader ever holds the lock a run needs (docs/bi.md)."""
    from assay.store.snapshot import publish
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        done = publish(wh)
    runs = f"{done.runs} run{'' if done.runs == 1 else 's'}"
    click.echo(f"published {done.path} ({runs}, {done.bytes / 1e6:.1f} MB) in {done.seconds:.2f} s")
