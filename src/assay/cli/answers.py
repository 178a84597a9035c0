"""`assay answers`: a run's answer records, and its stored replies validated again."""

from __future__ import annotations

import click

from assay.cli.base import cli, say, snapshot_option, warehouse_option


@cli.group()
def answers():
    """The answer stage: failure records, and validating stored replies again."""


@answers.command("show")
@click.argument("run_ref", required=False, default="latest", metavar="[RUN]")
@click.option("--failures", is_flag=True, help="Only questions whose answer refused or failed.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
def answers_show(run_ref, failures, fmt, warehouse_path):
    """Each question's answer record: status, refusal reason, stage, mode, HTTP status, claims kept, drops."""
    from assay.core import jsonout
    from assay.core.escape import terminal
    from assay.retrieval.answer.stage import ANSWER_COLUMNS
    from assay.store.run_status import resolve_any
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        run_id = resolve_any(wh, run_ref)["run_id"]  # failed and blocked runs too: this is how they are inspected
        rows = wh.con.execute(f"SELECT {', '.join(ANSWER_COLUMNS)} FROM answers WHERE run_id = ? "
                              + ("AND status <> 'answered' " if failures else "") + "ORDER BY query_id",
                              [run_id]).fetchall()
    records = [dict(zip(ANSWER_COLUMNS, r)) for r in rows]
    if fmt == "json":
        click.echo(jsonout.dumps(records, indent=2))
        return
    from assay.core.tables import render

    click.echo(f"answers of run {terminal(run_id)}: {len(records)} question(s)")
    table = [[r["query_id"], r["status"], r["refusal"], f"{r['claims_kept']}/{r['claims_returned']}",
              ", ".join(f"{k}={r[k]}" for k in ("mode", "http_status", "finish_reason", "drops", "repair_turns",
                                                 "parse_errors", "error") if r[k] not in (None, 0))] for r in records]
    if table:
        click.echo(render(["query_id", "status", "refusal", "claims kept", "details"], table,
                          align=["left", "left", "left", "right", "left"]))
    replies = [r for r in records if r["status"] != "answered" and r["response_excerpt"]]
    if replies:
        click.echo("\nreplies of the questions not answered:")
    for r in replies:
        click.echo(terminal(f"  {r['query_id']}: {r['response_excerpt']!r}"))


@answers.command("revalidate")
@click.argument("run_ref", metavar="RUN")
@click.option("--max-quote", type=int, required=True, help="The quote length limit to validate with.")
@warehouse_option
@snapshot_option
def answers_revalidate(run_ref, max_quote, warehouse_path, snapshot):
    """Apply the citation contract again to a run's stored replies (no model call); prints the new run id."""
    from assay.runs.revalidate import revalidate
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path, snapshot=snapshot) as wh:
        result = revalidate(wh, run_ref, max_quote)
    say(f"revalidated run {result['source_run_id']} with max quote {max_quote}: "
        f"{result['answers_changed']} of {result['questions']} answers changed, no model call; "
        f"new run {result['run_id']}")
    click.echo(result["run_id"])
