"""The bodies of the commands a warehouse and a lake both have (`report`, `runs`, `gate`, `regress`,
`history` and their `assay lake` twins), and the options they share: each body takes ``open_source``, a
callable giving a context manager over either."""

from __future__ import annotations

import sys

import click

from assay.cli.base import Number, emit, load_project, parse_measures, say
from assay.core.limits import ALPHA


def regress_mode_options(f):
    """--mode and --correction of `regress` and `lake regress`."""
    f = click.option("--correction", type=click.Choice(["holm", "bonferroni", "none"]), default="holm",
                     show_default=True,
                     help="How the family of every measure, level and slice checked is corrected (significance "
                          "mode).")(f)
    return click.option("--mode", type=click.Choice(["significance", "threshold"]), default="significance",
                        show_default=True,
                        help="significance: fail only when the change is significantly below -allowance; "
                             "threshold: fail when the change is below -allowance, whatever its significance.")(f)


def print_report(open_source, run_refs, measures, level, fmt, output=None) -> None:
    """`report` of one run or several, from a warehouse or a lake."""
    from assay.present.report import build_report, render
    from assay.present.report_runs import build_runs_report, render as render_runs

    chosen = parse_measures(measures)
    with open_source() as source:
        run_ids = [source.resolve_run_id(ref) for ref in run_refs or ("latest",)]
        if fmt == "html":
            from assay.present import html

            text = html.report(source, run_ids, chosen, level)
        elif len(run_ids) == 1:
            text = render(build_report(source, run_ids[0], chosen, level), fmt)
        else:
            text = render_runs(build_runs_report(source, run_ids, chosen, level), fmt)
    emit(text, output)


def gate_test_options(f):
    """--alpha, --correction and --format of `gate` and `lake gate`."""
    f = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                     show_default=True)(f)
    f = click.option("--correction", type=click.Choice(["holm", "bonferroni", "none"]), default="holm",
                     show_default=True,
                     help="How the family of every rule checked (each measure, level and slice) is corrected "
                          "when deciding which passing rules are fragile.")(f)
    return click.option("--alpha", type=Number(ALPHA), default=0.05, show_default=True,
                        help="Family-wise level of the one-sided tests behind `fragile` (between 0 and 1).")(f)


def gate_run(open_source, run_ref, rules, config_path, junit_path, preset, alpha=0.05, correction="holm",
             fmt="table") -> None:
    """`gate` on a run of a warehouse or a lake: print, write JUnit, exit 6 when a rule fails."""
    import json as _json

    from assay.core import jsonout
    from assay.store.run_status import resolve_checked
    from assay.verdicts import gate

    parsed, notes = gate.collect_rules(load_project(config_path), rules, preset)
    for note in notes:
        say(f"note: {note}")
    with open_source() as source:
        run_id = resolve_checked(source, run_ref, "gating it")
        if run_ref in (None, "", "latest"):
            say(f"gating run {run_id}, the newest run recorded")
        config = _json.loads(source.con.execute("SELECT config FROM runs WHERE run_id = ?",
                                                [run_id]).fetchall()[0][0])
        results = gate.check(source, run_id, parsed, seed=config["seed"],
                             samples=config.get("bootstrap_samples", 1000), alpha=alpha, correction=correction)
    if fmt == "json":
        click.echo(jsonout.dumps(gate.to_json(run_id, results), indent=2))
    else:
        click.echo(gate.render(run_id, results), nl=False)
    if junit_path:
        junit_path.write_text(gate.junit_xml(run_id, results), encoding="utf-8")
    if not all(r["passed"] for r in results):
        sys.exit(gate.GATE_FAILED)


def regress_run(open_source, run_ref, baseline, drops, alpha, fmt, mode="significance", correction="holm") -> None:
    """`regress` on a run of a warehouse or a lake: print, exit 7 on a regression."""
    from assay.core import jsonout
    from assay.store.run_status import resolve_checked
    from assay.verdicts import regression

    parsed = [regression.parse_drop(d) for d in drops]
    with open_source() as source:
        result = regression.regress(source, resolve_checked(source, run_ref, "checking it for regressions"),
                                    baseline, parsed, alpha, mode, correction)
    for r in result["skipped"]:
        say(f"note: --baseline latest stepped over run {r['run_id']}, which has status {r['status']} "
            f"({r['reason']})")
    if fmt == "json":
        click.echo(jsonout.dumps(result, indent=2, default=str))
    else:
        click.echo(regression.render_regress(result), nl=False)
    if result["regressed"]:
        sys.exit(regression.REGRESSED)


def history_kinds(f):
    """The options of `history` and `lake history` that choose which runs count and how a drop is tested."""
    from assay.verdicts.drop_test import ALPHA as DROP_ALPHA, KINDS, WINDOW

    f = click.option("--alpha", type=Number(ALPHA), default=DROP_ALPHA, show_default=True,
                     help="A drop is lasting only when its one-sided permutation test gives p below this.")(f)
    f = click.option("--baseline-window", "window", type=click.IntRange(min=1), default=WINDOW, show_default=True,
                     help="How many runs just before a drop it is tested against.")(f)
    f = click.option("--all-kinds", is_flag=True,
                     help="Show every kind of run (same as --include with all of them).")(f)
    return click.option("--include", default="", metavar="KIND,...",
                        help=f"Also show these kinds of run of the pipeline: {', '.join(KINDS)} (comma-separated); "
                             "left out by default: they are not the pipeline as it runs.")(f)


def print_history(open_source, pipeline, metric, level, slice_, tolerance, fmt, output=None, include="",
                  all_kinds=False, window=None, alpha=None) -> None:
    """`history` of a pipeline in a warehouse or a lake."""
    from assay.core import jsonout
    from assay.inputs.project import project_pipeline
    from assay.verdicts import regression

    pipeline = project_pipeline(pipeline)
    kinds = regression.KINDS if all_kinds else tuple(k.strip() for k in include.split(",") if k.strip())
    with open_source() as source:
        h = regression.history(source, pipeline, metric, level, slice_, tolerance, kinds, window, alpha)
    for r in h["incomplete"]:
        say(f"note: run {r['run_id']} has status {r['status']} ({r['reason']}): it has no metrics and "
            "is not shown")
    if fmt == "html":
        from assay.present.html import history as html_history

        emit(html_history.build(h), output)
        return
    emit(jsonout.dumps(h, indent=2, default=str) + "\n" if fmt == "json" else regression.render_history(h), output)


runs_format_option = click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
                                  show_default=True, help="json and csv give full ids and hashes.")


def print_runs(open_source, fmt: str = "table") -> None:
    """`runs` of a warehouse or a lake (``open_source()``: a context manager giving either)."""
    from assay.present.run_list import list_runs, render

    with open_source() as source:
        runs = list_runs(source)
    click.echo(render(runs, fmt), nl=False)
