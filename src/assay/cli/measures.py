"""`assay measures` (the registry listed; `measures compute` stores values for stored runs) and `eval-trec`
(a TREC run file scored by the same SQL)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import cli, parse_measures, warehouse_option


def _trec_standard() -> tuple[str, ...]:
    from assay.measures.registry import TREC_STANDARD

    return TREC_STANDARD


def _compact(names) -> str:
    """Measure names with their cutoffs gathered: 'AP, P@5/10/20, nDCG, nDCG@10'."""
    by_family: dict[str, list[str]] = {}
    for name in names:
        family, at, cut = name.partition("@")
        by_family.setdefault(family + at, []).append(cut)
    return ", ".join(key + "/".join(cuts) for key, cuts in by_family.items())


@cli.command("eval-trec")
@click.argument("qrels_path", metavar="QRELS", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("run_path", metavar="RUN", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("-m", "--measure", "measures", multiple=True,
              help="A measure, e.g. nDCG@10, AP, RR@10, R@100, or as trec_eval writes it (ndcg_cut_10, map, P_10; "
                   "`assay measures --aliases`), repeatable. Default: the standard set, "
                   f"{_compact(_trec_standard())}.")
@click.option("-q", "--per-query", is_flag=True, help="Also a row per query (trec_eval -q).")
@click.option("-c", "--complete", is_flag=True, help="Score qrels queries missing from the run as 0 (trec_eval -c).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
def eval_trec_cmd(qrels_path, run_path, measures, per_query, complete, fmt):
    """Evaluate a TREC run file against TREC qrels with assay's metric SQL (agrees with trec_eval)."""
    from assay.measures.trec_eval import evaluate_trec, render

    rows = evaluate_trec(qrels_path, run_path, list(measures) or None, per_query=per_query, complete=complete)
    click.echo(render(rows, fmt), nl=False)


@cli.group(invoke_without_command=True)
@click.option("--aliases", "aliases", is_flag=True,
              help="List the other spellings of the measures (trec_eval's, ranx's, ...) and the names refused "
                   "because they mean something else.")
@click.pass_context
def measures(ctx, aliases):
    """List every measure assay computes, with its definition (--aliases: the other names they go by)."""
    if ctx.invoked_subcommand is not None:
        return
    from assay.core.tables import render
    from assay.measures.registry import FAMILIES, names, syntax

    if aliases:
        table = names()
        click.echo(render(["alias", "measure", "used by", "the same because"],
                          [[a.spelling, a.measure, a.used_by, a.note] for a in table.aliases]))
        click.echo("\nrefused: they name measures that differ from assay's")
        click.echo(render(["name", "used by", "why"],
                          [[", ".join(r.spellings), r.used_by, r.why] for r in table.refused]))
        return
    rows = [[syntax(fam), fam.interval, fam.definition] for fam in FAMILIES.values()]
    click.echo(render(["measure", "interval", "definition"], rows))


@measures.command("compute")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--run", "run_refs", multiple=True, metavar="RUN",
              help="A stored run (repeatable): latest, latest~N, previous, an id or any unique part of one, or a "
                   "name.")
@click.option("--all-runs", is_flag=True, help="Every complete run in the warehouse.")
@click.option("--stage", type=click.Choice(["final", "rerank", "fusion", "bm25", "dense", "external"]),
              default="final", show_default=True,
              help="The ranking to score (question and answer measures only at final).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="assay.toml whose [measures] dir holds measure files (default: the nearest assay.toml, here or "
                   "above).")
@warehouse_option
def measures_compute(names, run_refs, all_runs, stage, config_path, warehouse_path):
    """Store per-question values of measures (default: the standard set) for stored runs in the table
    measure_values, one transaction per run. Values already stored are kept, so it can be run again."""
    from assay.inputs.project import load_config
    from assay.measures.registry import load_user_measures
    from assay.measures.values import compute
    from assay.store.warehouse import Warehouse

    if bool(run_refs) == all_runs:
        raise click.UsageError("give --run RUN_ID (repeatable) or --all-runs")
    load_user_measures(load_config(config_path))  # the measures of its [measures] dir can be named
    chosen = parse_measures(names)

    def said(stored):
        done = ", ".join(f"{name} {n}" for name, n in stored.written.items() if n)
        line = f"{stored.run_id}  stored {stored.total} values" + (f" ({done})" if done else "")
        click.echo(f"{line}; {stored.kept} already stored")
        for name, why in stored.skipped.items():
            click.echo(f"{stored.run_id}  skipped {name}: {why}")

    done = compute(Warehouse.brief(warehouse_path), run_refs, all_runs, chosen, stage, on_run=said)
    if not done:
        click.echo("no complete runs to compute")
