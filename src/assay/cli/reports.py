"""Commands that show stored runs: `report`, `show`, `export`."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import Number, check_output, cli, emit, output_option, warehouse_option
from assay.cli.sources import print_report
from assay.core.limits import K


def _measure_families() -> str:
    """The measure syntax, read from the registry (e.g. 'Success@k, RR[@k], AP[@k], Abstain')."""
    from assay.measures.registry import FAMILIES

    cut = {"required": "@k", "optional": "[@k]", "none": ""}
    return ", ".join(f.name + cut[f.cutoff] for f in FAMILIES.values())


@cli.command()
@click.argument("run_refs", nargs=-1, metavar="[RUN]...")
@click.option("-m", "--measure", "measures", multiple=True,
              help=f"A measure to report (repeatable; default: the standard set). One of: {_measure_families()}.")
@click.option("--level", type=click.Choice(["chunk", "doc"]), default=None,
              help="Only this ranking level (per-question and answer measures are kept).")
@click.option("--sweep", "sweep_ref", default=None, metavar="SWEEP_ID|latest",
              help="Show a sweep's table again (`assay sweep`), computed from its stored runs.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown", "html"]), default="table",
              show_default=True, help="html: one self-contained page with charts and every question (needs -o).")
@output_option
@warehouse_option
def report(run_refs, measures, level, sweep_ref, fmt, output, warehouse_path):
    """Metrics of one run with n and 95% intervals, overall and by category, form and hard class.

    With several runs: one table, a row per measure and level, a column per run, each later run tested
    against the first (paired tests, Holm-adjusted across the table). With --sweep: a sweep's table.
    """
    from assay.store.warehouse import Warehouse

    check_output(fmt, output)
    if sweep_ref is not None:
        if run_refs or measures or level:
            raise click.UsageError("--sweep takes no run ids, --measure or --level: the sweep fixes its measures")
        from assay.runs import sweep

        with Warehouse.open(warehouse_path, read_only=True) as wh:
            result = sweep.table(wh, sweep.resolve_sweep_id(wh, sweep_ref))
        if fmt == "html":
            from assay.present.html import sweep as html_sweep

            emit(html_sweep.build(result), output)
        else:
            emit(sweep.render(result, fmt), output)
        return
    print_report(lambda: Warehouse.open(warehouse_path, read_only=True), run_refs, measures, level, fmt, output)


@cli.command("show")
@click.argument("run_ref", metavar="RUN")
@click.argument("query_id", required=False, default=None)
@click.option("--depth", type=Number(K), default=5, show_default=True, help="Hits shown per stage.")
@click.option("--stage", "stage", default=None, help="Only this stage (bm25, dense, fusion, rerank, final, ...).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
def show_cmd(run_ref, query_id, depth, stage, fmt, warehouse_path):
    """One question of a run end to end: its gold quotes, where it was lost, each stage's ranked chunks with
    their text and the gold span marked inside it, and the answer where an answer stage ran. Without
    QUERY_ID: the run's questions, one line each."""
    from assay.core import jsonout
    from assay.present import drilldown, show
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        run_id = drilldown.resolve_run(wh, run_ref)
        if query_id is None:
            rows = drilldown.question_rows(wh, run_id)
        else:
            detail = drilldown.question_detail(wh, run_id, query_id, depth=depth)
    if query_id is None:
        if fmt == "json":
            click.echo(jsonout.dumps(rows, indent=2))
        else:
            show.render_questions(rows, run_id)
        return
    if stage is not None:
        detail = show.only_stage(detail, stage)
    if fmt == "json":
        click.echo(jsonout.dumps(detail, indent=2))
    else:
        show.render(detail)


@cli.command("export")
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN...")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "json", "trec"]), default="parquet",
              show_default=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="A new or empty directory.")
@click.option("-m", "--measure", "measures", multiple=True,
              help="A measure to export besides the standard set (repeatable; your measure files included).")
@click.option("--include-failed", is_flag=True,
              help="Export runs that did not complete (failed, blocked) too, with their status: references count "
                   "every run, and such a run has no rows in the metric and stage attribution tables.")
@warehouse_option
def export_cmd(run_refs, fmt, out_dir, measures, include_failed, warehouse_path):
    """Write runs, questions, hits, metrics, stage attribution, answers, claims and citations as files for BI
    tools (docs/exports.md)."""
    from assay.measures.registry import DEFAULT_MEASURES, parse_measure
    from assay.present.export import export_runs
    from assay.store.warehouse import Warehouse

    wanted = tuple({m.name: m for m in (*DEFAULT_MEASURES, *(parse_measure(t) for t in measures))}.values())
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        manifest = export_runs(wh, list(run_refs), fmt, out_dir, wanted, include_failed=include_failed)
    tables = ", ".join(f"{t} {n}" for t, n in manifest["tables"].items())
    click.echo(f"exported {len(manifest['runs'])} run(s) as {fmt} to {out_dir}: {tables} rows; "
               f"{len(manifest['files'])} files (manifest.json)")
