"""Commands that judge a run: `compare`, `gate`, `regress`, `history`."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import Number, check_output, cli, output_option, warehouse_option
from assay.cli.sources import (
    gate_run, gate_test_options, history_kinds, print_history, regress_mode_options, regress_run,
)
from assay.core.limits import ALPHA, TOLERANCE


@cli.command("compare")
@click.argument("run_a", metavar="A")
@click.argument("run_b", metavar="B")
@click.option("--flips", "flip_metric", default="Success@3", show_default=True,
              help="Hit measure whose flipped questions are listed.")
@click.option("--flip-level", type=click.Choice(["chunk", "doc"]), default="doc", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
def compare_cmd(run_a, run_b, flip_metric, flip_level, fmt, warehouse_path):
    """Compare run A with run B: deltas, paired intervals and tests, flipped questions, slices."""
    from assay.core import jsonout
    from assay.store.warehouse import Warehouse
    from assay.verdicts import comparison

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        result = comparison.compare(wh, wh.resolve_run_id(run_a), wh.resolve_run_id(run_b),
                                    flip_metric=flip_metric, flip_level=flip_level)
    click.echo(jsonout.dumps(result, indent=2, default=str) if fmt == "json" else comparison.render(result), nl=False)
    if fmt == "json":
        click.echo()


@cli.command("gate")
@click.argument("run_ref", required=False, default="latest", metavar="[RUN]")
@click.option("--rule", "rules", multiple=True,
              help="A rule such as 'Success@3:doc>=0.75' (repeatable; added to [gate] rules in assay.toml).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration (default: the nearest assay.toml, here or above).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the rules as JUnit XML test cases to this file.")
@click.option("--preset", default=None, help="A named set of rules: rag (retrieval and answers) or retrieval.")
@gate_test_options
@warehouse_option
def gate_cmd(run_ref, rules, config_path, junit_path, preset, alpha, correction, fmt, warehouse_path):
    """Check a run against pass/fail rules; exit code 6 when any rule fails.

    A rule passes or fails on its value against the bar. A passing rule is marked fragile (a warning, exit code
    unchanged) when a one-sided test that its true value is on the passing side is not significant at --alpha,
    corrected over every rule checked (--correction, Holm by default).

    `latest` is the newest run recorded, whatever its status: when it failed or was blocked, the gate
    fails with exit code 8 and says why; it never falls back to an earlier run. Gate an earlier
    complete run by naming its id. A rule that cannot be read, or names an unknown measure or a slice
    the run does not have, is a usage error (exit code 2); a rule given twice is checked once."""
    from assay.store.warehouse import Warehouse

    gate_run(lambda: Warehouse.open(warehouse_path, read_only=True), run_ref, rules, config_path, junit_path, preset,
             alpha, correction, fmt)


@cli.command("regress")
@click.argument("run_ref", required=False, default="latest", metavar="[RUN]")
@click.option("--baseline", default="latest", show_default=True,
              help="latest (newest complete comparable run of the same pipeline before it; runs that did not "
                   "complete in between are named), best, or a run: its id or any unique part of it, a name, "
                   "previous, latest~N.")
@click.option("--max-drop", "drops", multiple=True, required=True,
              help="Allowed drop, e.g. 'Success@1=0.02' or 'nDCG@10:doc=0.03' (repeatable).")
@click.option("--alpha", type=Number(ALPHA), default=0.05, show_default=True,
              help="Family-wise significance level of the paired tests (between 0 and 1).")
@regress_mode_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
def regress_cmd(run_ref, baseline, drops, alpha, mode, correction, fmt, warehouse_path):
    """Fail (exit code 7) when a measure drops below its allowance, overall or in a slice.

    A change is candidate - baseline; a drop is a negative change; --max-drop M=a guards "change >= -a".
    --mode significance (the default) fails only when the change is significantly below -a (one-sided paired
    test, corrected over every measure, level and slice checked); --mode threshold fails on the change alone.

    `latest` (the candidate) is the newest run recorded, whatever its status: when it failed or was
    blocked, regress fails with exit code 8 and says why, as does a named baseline that did not complete."""
    from assay.store.warehouse import Warehouse

    regress_run(lambda: Warehouse.open(warehouse_path, read_only=True), run_ref, baseline, drops, alpha, fmt,
                mode, correction)


@cli.command("history")
@click.option("--pipeline", default=None,
              help="Pipeline name (default: [project] pipeline in assay.toml, else bm25).")
@click.option("--metric", required=True, help="Measure, e.g. nDCG@10.")
@click.option("--level", type=click.Choice(["chunk", "doc", "query"]), default=None,
              help="Level (default chunk; query for Abstain).")
@click.option("--slice", "slice_", default="all", show_default=True, help="Slice, e.g. form=gap.")
@click.option("--tolerance", type=Number(TOLERANCE), default=0.02, show_default=True,
              help="How far below the earlier best a run must stay for a drop to count as lasting.")
@history_kinds
@click.option("--format", "fmt", type=click.Choice(["table", "json", "html"]), default="table", show_default=True,
              help="html: one self-contained page, the measure over time with its interval band (needs -o).")
@output_option
@warehouse_option
def history_cmd(pipeline, metric, level, slice_, tolerance, include, all_kinds, window, alpha, fmt, output,
                warehouse_path):
    """A metric across a pipeline's runs over time, and where a lasting drop began.

    A drop is lasting when no later run came back within --tolerance of the best before it AND the runs from it on
    are significantly below the --baseline-window runs before it (one-sided permutation test, p < --alpha; paired
    over questions when the runs share them). A sweep's points, an ablation's rungs and rescored or revalidated runs
    are left out unless --include names them (or --all-kinds)."""
    from assay.store.warehouse import Warehouse

    check_output(fmt, output)
    print_history(lambda: Warehouse.open(warehouse_path, read_only=True), pipeline, metric, level, slice_, tolerance,
                  fmt, output, include, all_kinds, window, alpha)
