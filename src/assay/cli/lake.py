"""`assay lake`: a lake of runs (`assay run --lake DIR`) read as a warehouse is, by DuckDB or Spark."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import Number, _read_config, cli, lake_location, parse_measures, say
from assay.cli.sources import (
    gate_run, gate_test_options, history_kinds, print_history, print_report, print_runs, regress_mode_options,
    regress_run, runs_format_option,
)
from assay.core.errors import AssayError
from assay.core.limits import ALPHA, TOLERANCE


@cli.group("lake")
def lake_group():
    """Read a lake of runs (`assay run --lake DIR`): reports, history, gates and regressions as over a warehouse.

    Each command takes the lake (a directory, or s3://bucket/prefix with the AWS variables or [lake] endpoint
    and region) and --engine: duckdb (default, in this process) or spark (Apache
    Spark through Ibis; --spark-master URL, or [lake] spark_master in assay.toml, names a cluster; default
    local[*]). `compact` and `prune` keep a lake small: fewer files, old runs removed."""


class LakeArgument(click.ParamType):
    """A lake: an existing directory (as click.Path checks it), or a URL, kept as text for assay.store.lake.location
    to accept (s3://) or refuse (any other scheme) with the project's settings."""

    name = "lake"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and "://" in value:
            return value
        return click.Path(file_okay=False, exists=True, path_type=Path).convert(value, param, ctx)


def lake_options(f):
    """The lake directory and the engine that reads it; shared by every `assay lake` command."""
    from assay.store.lake import ENGINES

    options = [
        click.argument("lake_dir", metavar="LAKE", type=LakeArgument()),
        click.option("--engine", type=click.Choice(sorted(ENGINES)), default="duckdb", show_default=True,
                     help="What reads the lake: duckdb (this process) or spark (Apache Spark through Ibis)."),
        click.option("--spark-master", default=None, metavar="URL",
                     help="Spark master for --engine spark, e.g. spark://host:7077 (default: [lake] spark_master "
                          "in assay.toml, else local[*])."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Project configuration (default: the nearest assay.toml, here or above)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _open_lake(lake_dir, engine, spark_master, config_path, skip_damaged=False):
    from assay.store.lake import open_lake

    lake = lake_location(lake_dir, config_path)
    if engine == "duckdb":
        return open_lake(lake, skip_damaged=skip_damaged)
    from assay.inputs.project import load_config

    master = spark_master or load_config(config_path).get("lake", {}).get("spark_master")
    if master is not None and not isinstance(master, str):
        raise AssayError(f"[lake] spark_master must be a URL string such as 'spark://host:7077', not {master!r}")
    return open_lake(lake, engine, skip_damaged=skip_damaged, spark_master=master)


@lake_group.command("runs")
@lake_options
@runs_format_option
def lake_runs(lake_dir, engine, spark_master, config_path, fmt):
    """List the runs in the lake, newest first, with the columns of `assay runs`. A run with a file that cannot be
    read as Parquet is left out, with a warning naming the file."""

    def readable():
        lake = _open_lake(lake_dir, engine, spark_master, config_path, skip_damaged=True)
        for run_id, (file, why) in sorted(getattr(lake, "damaged", {}).items()):
            aside = (f"move the segment aside ({lake_dir}/_compacted/{str(file).rsplit('/', 2)[-2]}: its runs go "
                     "with it)" if "/_compacted/" in str(file)
                     else f"move its partitions aside ({lake_dir}/*/run_id={run_id}) or write the run again")
            say(f"warning: run {run_id} left out: {file} is not a readable Parquet file ({why}); {aside}")
        return lake

    print_runs(readable, fmt)


@lake_group.command("report")
@lake_options
@click.argument("run_refs", nargs=-1, metavar="[RUN]...")
@click.option("-m", "--measure", "measures", multiple=True,
              help="A measure to report (repeatable; default: the standard set; `assay measures` lists them).")
@click.option("--level", type=click.Choice(["chunk", "doc"]), default=None,
              help="Only this ranking level (per-question and answer measures are kept).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True)
def lake_report(lake_dir, engine, spark_master, config_path, run_refs, measures, level, fmt):
    """Metrics of runs in the lake, exactly as `assay report` gives them for a warehouse."""
    print_report(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_refs, measures, level, fmt)


@lake_group.command("compute")
@lake_options
@click.option("-m", "--measure", "measures", multiple=True, required=True,
              help="A measure (repeatable; `assay measures` lists them).")
@click.option("--pipeline", default=None, help="Only runs of this pipeline.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def lake_compute(lake_dir, engine, spark_master, config_path, measures, pipeline, fmt):
    """The mean of each measure over the questions of every complete run in the lake, oldest run first."""
    from assay.core import jsonout
    from assay.core.escape import terminal
    from assay.measures.run_means import run_means

    chosen = parse_measures(measures)
    with _open_lake(lake_dir, engine, spark_master, config_path) as lake:
        rows = run_means(lake, chosen, pipeline)
    if fmt == "json":
        click.echo(jsonout.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo("no complete runs" + (f" of pipeline {terminal(pipeline)}" if pipeline else ""))
        return
    from assay.core.tables import render

    click.echo(render(["run", "pipeline", "metric", "level", "value", "n"],
                      [[r["run_id"], r["pipeline"], r["metric"], r["level"],
                        "n/a" if r["value"] is None else f"{r['value']:.4f}", r["n"]] for r in rows],
                      align=["left"] * 4 + ["right"] * 2))


@lake_group.command("history")
@lake_options
@click.option("--pipeline", default=None,
              help="Pipeline name (default: [project] pipeline in assay.toml, else bm25).")
@click.option("--metric", required=True, help="Measure, e.g. nDCG@10.")
@click.option("--level", type=click.Choice(["chunk", "doc", "query"]), default=None,
              help="Level (default chunk; query for Abstain).")
@click.option("--slice", "slice_", default="all", show_default=True, help="Slice, e.g. form=gap.")
@click.option("--tolerance", type=Number(TOLERANCE), default=0.02, show_default=True,
              help="How far below the earlier best a run must stay for a drop to count as lasting.")
@history_kinds
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def lake_history(lake_dir, engine, spark_master, config_path, pipeline, metric, level, slice_, tolerance, include,
                 all_kinds, window, alpha, fmt):
    """A metric across a pipeline's runs in the lake over time, and where a lasting drop began (as `assay history`:
    significant against the baseline window; sweeps, ablations and derived runs only with --include)."""
    print_history(lambda: _open_lake(lake_dir, engine, spark_master, config_path), pipeline, metric, level, slice_,
                  tolerance, fmt, None, include, all_kinds, window, alpha)


@lake_group.command("gate")
@lake_options
@click.argument("run_ref", required=False, default="latest", metavar="[RUN]")
@click.option("--rule", "rules", multiple=True,
              help="A rule such as 'Success@3:doc>=0.75' (repeatable; added to [gate] rules in assay.toml).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the rules as JUnit XML test cases to this file.")
@click.option("--preset", default=None, help="A named set of rules: rag (retrieval and answers) or retrieval.")
@gate_test_options
def lake_gate(lake_dir, engine, spark_master, config_path, run_ref, rules, junit_path, preset, alpha, correction,
              fmt):
    """Check a run in the lake against pass/fail rules, as `assay gate` does; exit code 6 when any rule fails."""
    gate_run(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_ref, rules, config_path, junit_path,
             preset, alpha, correction, fmt)


@lake_group.command("regress")
@lake_options
@click.argument("run_ref", required=False, default="latest", metavar="[RUN]")
@click.option("--baseline", default="latest", show_default=True,
              help="latest (newest complete comparable run of the same pipeline before it), best, or a run id.")
@click.option("--max-drop", "drops", multiple=True, required=True,
              help="Allowed drop, e.g. 'Success@1=0.02' or 'nDCG@10:doc=0.03' (repeatable).")
@click.option("--alpha", type=Number(ALPHA), default=0.05, show_default=True,
              help="Family-wise significance level of the paired tests (between 0 and 1).")
@regress_mode_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def lake_regress(lake_dir, engine, spark_master, config_path, run_ref, baseline, drops, alpha, mode, correction,
                 fmt):
    """Fail (exit code 7) when a run in the lake drops more than allowed, as `assay regress` does."""
    regress_run(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_ref, baseline, drops, alpha, fmt,
                mode, correction)


def grace_option(f):
    return click.option("--grace", "grace_s", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
                        help="Keep superseded segments and the partitions of compacted runs this long after the "
                             "commit that made them unneeded, for readers still open (default: [lake] "
                             "orphan_grace_s, 3600).")(f)


def lake_write_options(f):
    """The lake and assay.toml of the commands that change a lake (`compact`, `prune`): no engine."""
    f = click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Project configuration (default: the nearest assay.toml, here or above).")(f)
    return click.argument("lake_dir", metavar="LAKE", type=LakeArgument())(f)


@lake_group.command("compact")
@lake_write_options
@grace_option
def lake_compact(lake_dir, config_path, grace_s):
    """Rewrite each day's small per-run files into one file per table (a segment), without changing any result.

    Only committed runs are compacted: runs being written meanwhile stay as they are and stay visible. What the
    new segments make unneeded (older segments, the compacted runs' partitions) is removed by a later compact or
    prune once --grace seconds have passed, so a reader open now still finds its files."""
    from assay.store.lake.compact import compact

    outcome = compact(lake_location(lake_dir, config_path), grace_s)
    if not outcome.written:
        click.echo("nothing to compact: every committed run is in its day's segment")
    for w in outcome.written:
        click.echo(f"{w.day}: {w.added} run(s) compacted, {w.runs} in segment _compacted/{w.name} "
                   f"({w.replaced} files -> {w.files})")
    _removed(outcome)


def _removed(outcome) -> None:
    if outcome.undated:
        click.echo(f"left as they are: {len(outcome.undated)} run(s) whose id has no date "
                   f"({', '.join(outcome.undated[:3])}{'...' if len(outcome.undated) > 3 else ''})")
    click.echo(f"removed {len(outcome.removed)} superseded segment(s) or partition(s)"
               + (f"; {outcome.waiting} wait for the grace period" if outcome.waiting else ""))
    if outcome.unused or outcome.unused_waiting:
        click.echo(f"removed {len(outcome.unused)} shared part(s) no run uses"
                   + (f"; {outcome.unused_waiting} wait for the grace period or for writers in flight"
                      if outcome.unused_waiting else ""))


@lake_group.command("prune")
@lake_write_options
@click.option("--keep", required=True, metavar="N|AGE",
              help="Keep the newest N runs (500), or the runs younger than AGE (30d, 12h, from the time in the run "
                   "id); the rest are removed.")
@click.option("--baseline", "baselines", multiple=True, metavar="RUN",
              help="A run never to remove (repeatable; added to [lake] baselines in assay.toml).")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@grace_option
def lake_prune(lake_dir, config_path, keep, baselines, dry_run, grace_s):
    """Remove old runs from the lake, whole, by age or count; never a protected run: one named in [lake]
    baselines or by --baseline, or the newest complete run of a pipeline (what `lake gate` and `lake regress`
    name as latest). Each removed run is printed."""
    from assay.store.lake.compact import config_baselines, prune

    config = _read_config(config_path)
    named = config_baselines(config) + [(b, "--baseline") for b in baselines]
    outcome = prune(lake_location(lake_dir, config_path), keep, named, dry_run, grace_s)
    for run_id, why in sorted(outcome.protected.items()):
        click.echo(f"kept {run_id}: {why}")
    for run_id in outcome.pruned:
        click.echo(f"{'would remove' if dry_run else 'removed'} {run_id}")
    click.echo(f"{len(outcome.pruned)} run(s) {'would be removed' if dry_run else 'removed'}"
               + ("" if outcome.pruned else ": none is outside --keep"))
    if not dry_run:
        for w in outcome.written:
            click.echo(f"{w.day}: segment rewritten without {w.dropped} run(s), {w.runs} left: _compacted/{w.name}")
        _removed(outcome)
