"""Commands that write runs: `run`, `ablate`, `sweep`, `rescore`, and `calibrate` (a calibration fitted on a
stored run)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.cli.base import (
    AssayCommand, Number, cli, corpus_option, corpus_options, judgments_option, lake_location, load_project,
    max_file_option, say, setting, snapshot_option, warehouse_option,
)
from assay.core.limits import ALPHA, BUDGET, K, SWEEP_POINTS


class InputsFirst(AssayCommand):
    """A command whose --help lists what it reads and writes (corpus, judgments, pipeline, configuration,
    warehouse) first, under their own heading, before the many settings."""

    INPUTS = ("corpus_dir", "judgments_path", "pipeline", "pipelines", "run_name", "config_path", "warehouse_path",
              "lake_dir")

    def format_options(self, ctx, formatter):
        inputs, rest = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                (inputs if param.name in self.INPUTS else rest).append((param.name, record))
        inputs.sort(key=lambda item: self.INPUTS.index(item[0]))
        with formatter.section("Inputs (in a project, assay.toml's [project] gives them)"):
            formatter.write_dl([record for _, record in inputs])
        with formatter.section("Options"):
            formatter.write_dl([record for _, record in rest])


def _inputs(corpus_dir, judgments_path):
    """--corpus and --judgments, else the project's (assay.inputs.project.project_input)."""
    from assay.inputs.project import project_input

    return project_input("corpus", corpus_dir), project_input("judgments", judgments_path)


def run_options(f):
    """Options shared by `run` and `ablate`. Unset ones fall back to the pipeline, assay.toml, then defaults."""
    options = [
        corpus_option,
        judgments_option,
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Project configuration (default: the nearest assay.toml, here or above)."),
        click.option("--chunker", type=click.Choice(["recursive", "fixed", "document"]), default=None,
                     help="Chunker (default recursive)."),
        click.option("--chunk-size", type=setting("chunk_size"), default=None,
                     help="Chunk size in characters (default 800)."),
        click.option("--overlap", type=setting("overlap"), default=None,
                     help="Overlap in characters (default 0 for recursive; for fixed 100, or a quarter of the size if "
                          "smaller)."),
        click.option("--depth", type=setting("depth"), default=None,
                     help="Candidates per first-stage list (default 100)."),
        click.option("--doc-depth", type=setting("doc_depth"), default=None,
                     help="Retrieve deeper until this many distinct documents exist (default 10)."),
        click.option("--lowercase/--no-lowercase", default=None, help="BM25 analyzer: lower-case (default on)."),
        click.option("--stopwords/--no-stopwords", default=None,
                     help="BM25 analyzer: remove English stop words (default on)."),
        click.option("--stemming/--no-stemming", default=None, help="BM25 analyzer: English stemming (default on)."),
        click.option("--embedder", default=None,
                     help="Embedding model: auto (bge-small if cached, else the offline MiniLM), or a fastembed name."),
        click.option("--max-length", type=setting("max_length"), default=None,
                     help="Word pieces the embedding model takes per text, special tokens included (default: the "
                          "model's, 256 for the offline MiniLM; at most the model's limit, 512 for both). Longer "
                          "chunks are cut; the run counts them."),
        click.option("--fusion", type=click.Choice(["rrf", "weighted"]), default=None,
                     help="How hybrid pipelines fuse the lists (default rrf)."),
        click.option("--rrf-k", type=setting("rrf_k"), default=None, help="RRF constant k (default 60)."),
        click.option("--reranker", default=None,
                     help="Cross-encoder model name (default Xenova/ms-marco-MiniLM-L-6-v2)."),
        click.option("--reranker-path", default=None, help="Directory of a local ONNX cross-encoder."),
        click.option("--rerank-top-n", type=setting("rerank_top_n"), default=None,
                     help="Fused candidates the reranker scores (default 50)."),
        click.option("--final-k", type=setting("final_k"), default=None,
                     help="Length of the final list (default: the depth)."),
        click.option("--calibration", default=None, help="Apply a stored calibration: abstain below its threshold."),
        click.option("--seed", type=setting("seed"), default=None,
                     help="Seed of every bootstrap over this run (default 0)."),
        click.option("--command", default=None,
                     help="command pipeline: the program to start (reads questions as JSON lines, writes results)."),
        click.option("--url", default=None, help="http pipeline: the URL questions are POSTed to."),
        click.option("--run-file", default=None, help="trec-run pipeline: a stored TREC run file to evaluate."),
        click.option("--run-order", type=click.Choice(["score", "rank"]), default=None,
                     help="trec-run pipeline: score (default) ranks each query's lines by score, ties by docno "
                          "descending, as trec_eval does; rank follows the file's rank column (a file `assay export "
                          "--format trec` wrote: the order assay stored, ties included)."),
        click.option("--timeout", "timeout_s", type=setting("timeout_s"), default=None,
                     help="command/http pipelines: seconds to wait for each answer (default 30)."),
        click.option("--pass-env", "pass_env", multiple=True, default=None, metavar="NAME",
                     help="command pipeline: an environment variable the program gets besides PATH, HOME, LANG, "
                          "TMPDIR and the like (repeatable; no other variable reaches it)."),
        click.option("--api-key-env", default=None,
                     help="http pipeline: environment variable holding a bearer token (never stored)."),
        click.option("--generator", type=click.Choice(["extractive", "openai"]), default=None,
                     help="Answer stage: extractive (offline) or openai (any OpenAI-compatible endpoint)."),
        click.option("--generator-url", "generator_base_url", default=None,
                     help="openai generator: base URL of the chat-completions endpoint (…/v1)."),
        click.option("--generator-model", default=None, help="openai generator: model name."),
        click.option("--generator-api-key-env", default=None,
                     help="openai generator: environment variable holding the API key (default OPENAI_API_KEY)."),
        click.option("--generator-timeout", "generator_timeout_s", type=setting("generator_timeout_s"), default=None,
                     help="openai generator: seconds per request (default 60)."),
        click.option("--min-interval", "min_interval_s", type=setting("min_interval_s"), default=None,
                     help="openai generator: minimum seconds between request starts (default 0)."),
        click.option("--max-retry-wait", "max_retry_wait_s", type=setting("max_retry_wait_s"), default=None,
                     help="openai generator and judge: most seconds one request waits for its 429/503 retries in "
                          "all, backoff and Retry-After together; a longer wait fails the question (default 120)."),
        click.option("--max-reply-chars", type=setting("max_reply_chars"), default=None,
                     help="openai generator and judge: characters of each model reply (and of each error quoting "
                          "one) stored; 0 stores no reply text (default 65536)."),
        click.option("--context-k", type=setting("context_k"), default=None,
                     help="Final chunks given to the generator (default 5)."),
        click.option("--max-quote", type=setting("max_quote"), default=None,
                     help="Longest citation quote, characters (default 240)."),
        click.option("--judge-url", "judge_base_url", default=None,
                     help="Optional judge: base URL of a chat-completions endpoint that judges each kept claim."),
        click.option("--judge-model", default=None, help="Judge model; must differ from the generator's model."),
        click.option("--judge-api-key-env", default=None,
                     help="Environment variable holding the judge's API key (default OPENAI_API_KEY)."),
        click.option("--force-generation/--no-force-generation", default=None,
                     help="Answer even where a calibration says abstain (diagnostic; the run is not a gate run)."),
        max_file_option,
    ]
    for option in reversed(options):
        f = option(f)
    return corpus_options(f)


@cli.command("run", cls=InputsFirst)
@click.option("--pipeline", default=None,
              help="bm25, dense, hybrid, hybrid-rerank, dense-top3, command, http, trec-run, a plugin's name, "
                   "or one defined in assay.toml (default: [project] pipeline in assay.toml, else bm25).")
@run_options
@warehouse_option
@snapshot_option
@click.option("--lake", "lake_dir", metavar="LAKE", default=None,
              help="Write the run as its own partition of this lake (a directory, or s3://bucket/prefix) instead of "
                   "a warehouse: no lock, any number of concurrent writers (`assay lake` reads it).")
@click.option("--name", "run_name", default=None, metavar="NAME",
              help="Name the run, so commands can name it by it (`assay report NAME`; `assay tag` moves names). "
                   "Refused before the run starts when NAME already names a run.")
def run_cmd(corpus_dir, judgments_path, warehouse_path, snapshot, lake_dir, run_name, **kw):
    """Resolve judgments, chunk, index, ask every question; record the run. Prints the run id.

    The warehouse is never held while the run computes: reads (the embedding cache, calibrations,
    @NAME collections) open it briefly, and the run is written in one short transaction. With --lake
    the run touches no warehouse and is written as its own Parquet partitions, renamed into place (on an
    object store, s3://bucket/prefix: written under their keys, its `runs` partition last, as its commit).

    A run whose answer stage could not run (every question sent to the model failed: no key, an
    unreachable endpoint; or the endpoint answered HTTP 429 three times in a row) is recorded as
    failed or blocked, its id printed, and the command exits 8: `assay answers show RUN_ID` shows
    what each question got. A run where only some questions failed is complete.

    In a project (an assay.toml here or above, as `assay init` writes) `assay run` alone runs its [project]
    corpus, judgments and pipeline; options replace them."""
    from assay.inputs.project import project_pipeline
    from assay.runs.runner import RunOptions, check_outcome, execute_run
    from assay.runs.sinks import LakeSink, WarehouseSink

    corpus_dir, judgments_path = _inputs(corpus_dir, judgments_path)
    kw["pipeline"] = project_pipeline(kw["pipeline"])
    if lake_dir is not None and warehouse_path is not None:
        raise click.UsageError("give --lake or --warehouse, not both: a lake run touches no warehouse")
    if lake_dir is not None and run_name is not None:
        raise click.UsageError("--name needs a warehouse: a lake keeps no names (its partitions never change)")
    if lake_dir is not None and snapshot:
        raise click.UsageError("--snapshot needs a warehouse: a lake run touches none (BI tools read the lake's "
                               "Parquet: docs/bi.md)")
    sink = (LakeSink(lake_location(lake_dir, kw["config_path"])) if lake_dir is not None
            else WarehouseSink(warehouse_path, snapshot))
    try:
        sink.check()  # before any work: a warehouse or lake the run could not be written to is found now
        if run_name is not None:
            from assay.store.run_refs import check_free, check_name

            check_name(run_name)
            if sink.path_exists():
                check_free(sink.reads(), run_name)
        record = execute_run(corpus_dir, judgments_path, RunOptions(**kw), progress=say, warehouse=sink.reads)
        where = sink.write(record, name=run_name)
        say(f"recorded run {record.run_id} ({len(record.query_rows)} questions) in {where}"
            + (f" as {run_name}" if run_name else ""))
    finally:
        sink.close()
    click.echo(record.run_id)
    check_outcome(record)


@cli.command(cls=InputsFirst)
@run_options
@click.option("--rule", "rules", multiple=True,
              help="A gate rule every rung is checked against (repeatable; added to [gate] rules in assay.toml).")
@click.option("--preset", default=None, help="A named set of gate rules: rag (retrieval and answers) or retrieval.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
@snapshot_option
def ablate(corpus_dir, judgments_path, warehouse_path, snapshot, rules, preset, fmt, **kw):
    """Run the ablation ladder (BM25, dense, hybrid, + rerank, weakened; or [ablate] rungs in assay.toml) and
    print one table with deltas. Exit code 6 when the weakened rung passes every gate rule, or, without rules,
    is not visibly worse than the baseline."""
    from assay.core import jsonout
    from assay.runs import ablation
    from assay.runs.runner import RunOptions
    from assay.store.warehouse import Warehouse
    from assay.verdicts import gate

    corpus_dir, judgments_path = _inputs(corpus_dir, judgments_path)
    config = load_project(kw["config_path"])
    parsed = gate.rules_from(config, rules, preset, required=False)
    ladder = ablation.ladder_from(config)
    # each rung computes without holding the warehouse and writes its run in one short transaction
    rungs = ablation.ablate(Warehouse.brief(warehouse_path, snapshot=snapshot), corpus_dir, judgments_path, RunOptions(**kw),
                            progress=say, ladder=ladder, rules=parsed)
    if fmt == "json":
        click.echo(jsonout.dumps(ablation.to_json(rungs, parsed), indent=2))
    else:
        click.echo(ablation.render(rungs, parsed), nl=False)
    sys.exit(ablation.verdict(rungs, parsed).exit_code)


@cli.command("sweep", cls=InputsFirst)
@corpus_option
@judgments_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration: its [sweep] table gives the grid (default: the nearest assay.toml, here "
                   "or above).")
@click.option("--chunker", "chunkers", multiple=True, help="Chunkers to try (repeatable; default recursive).")
@click.option("--size", "sizes", multiple=True, type=setting("chunk_size"),
              help="Chunk sizes in characters (repeatable; default 200, 400, 800, 1600).")
@click.option("--overlap", "overlaps", multiple=True, type=setting("overlap"),
              help="Overlaps in characters (repeatable; default 0).")
@click.option("--pipeline", "pipelines", multiple=True, help="Pipelines to try (repeatable; default bm25).")
@click.option("--budget", type=Number(BUDGET), default=None,
              help="Context budget in tokens for the span measures (default 1000).")
@click.option("--k", "k", type=Number(K), default=None,
              help="Results for doc-level Success@k, SpanRecall@k and the Pareto front (default 5).")
@click.option("--select", default=None, help="Measure that picks the best point (default SpanRecall@<budget>tok).")
@click.option("--alpha", type=Number(ALPHA), default=None,
              help="Level of the paired tests against the best (default 0.05).")
@click.option("--seed", type=setting("seed"), default=None, help="Seed of every bootstrap and test (default 0).")
@click.option("--depth", type=setting("depth"), default=None, help="Candidates per first-stage list (default 100).")
@click.option("--embedder", default=None, help="Embedding model for dense pipelines (default auto).")
@click.option("--max-length", type=setting("max_length"), default=None,
              help="Word pieces the embedding model takes per text (default: the model's; at most its limit).")
@click.option("--max-points", type=Number(SWEEP_POINTS), default=None,
              help="Points the sweep runs without asking (default 100; [sweep] max_points). A larger grid is "
                   "confirmed on a terminal and refused without one (CI): give its size to run it.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@max_file_option
@warehouse_option
@snapshot_option
@corpus_options
def sweep_cmd(corpus_dir, judgments_path, config_path, chunkers, sizes, overlaps, pipelines, budget, k, select, alpha,
              seed, depth, embedder, max_length, max_points, fmt, max_file_mb, warehouse_path, snapshot):
    """Run a grid of chunkers x sizes x overlaps x pipelines and compare the points fairly (docs/chunking.md)."""
    from assay.runs import sweep
    from assay.runs.runner import RunOptions
    from assay.store.warehouse import Warehouse

    corpus_dir, judgments_path = _inputs(corpus_dir, judgments_path)
    config = load_project(config_path)
    spec = sweep.spec_from(config, {
        "chunkers": list(chunkers), "sizes": list(sizes), "overlaps": list(overlaps), "pipelines": list(pipelines),
        "budget": budget, "k": k, "select": select, "alpha": alpha})
    options = RunOptions(config_path=config_path, seed=seed, depth=depth, embedder=embedder, max_length=max_length,
                         max_file_mb=max_file_mb)
    # the points compute without holding the warehouse; each is written in one short transaction as it finishes
    sweep_id = sweep.run_sweep(Warehouse.brief(warehouse_path, snapshot=snapshot), corpus_dir, judgments_path, spec, options,
                               progress=say, max_points=sweep.max_points_from(config, max_points),
                               confirm=_confirm_points)
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        say(f"recorded sweep {sweep_id} in {wh.path}; `assay report --sweep {sweep_id}` shows it again\n")
        _, broken = wh.query("reports/sweep_incomplete", sweep_id=sweep_id)
        if broken:
            from assay.core.errors import RunFailed

            raise RunFailed(f"sweep {sweep_id}: {len(broken)} point(s) did not complete ("
                            + ", ".join(f"run {r} has status {st}" for r, st in broken)
                            + "); they are stored for inspection (`assay answers show RUN_ID`)")
        click.echo(sweep.render(sweep.table(wh, sweep_id), fmt), nl=False)


def _confirm_points(n_points: int, max_points: int) -> bool:
    """Ask on the terminal whether a grid larger than --max-points runs; without a terminal (CI) the answer is no."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    return click.confirm(f"sweep: the grid has {n_points} points, more than --max-points {max_points}, and each is a "
                         f"full run of every question. Run all {n_points}?", default=False, err=True)


@cli.command("rescore")
@click.argument("run_ref", metavar="RUN")
@click.option("--judgments", "judgments_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Corrected or extended judgments for the same questions (default: [project] judgments in "
                   "assay.toml).")
@warehouse_option
@snapshot_option
def rescore_cmd(run_ref, judgments_path, warehouse_path, snapshot):
    """Score a stored run again against other judgments, without retrieving; prints the new run id."""
    from assay.inputs.project import project_input
    from assay.runs.rescore import rescore
    from assay.store.warehouse import Warehouse

    judgments_path = project_input("judgments", judgments_path)
    with Warehouse.open(warehouse_path, snapshot=snapshot) as wh:
        result = rescore(wh, run_ref, judgments_path)
    say(f"rescored run {result['source_run_id']} against {judgments_path} "
        f"({result['questions']} questions) as run {result['run_id']}")
    click.echo(result["run_id"])


@cli.command("calibrate")
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@warehouse_option
def calibrate_cmd(run_ref, fmt, warehouse_path):
    """Fit and store a Platt calibration of a run's top scores, for calibrated abstention."""
    from assay.core import jsonout
    from assay.runs.abstention import fit_and_store, render
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path) as wh:
        run_id = wh.resolve_run_id(run_ref)
        calibration_id, data = fit_and_store(wh, run_id)
    if fmt == "json":
        click.echo(jsonout.dumps({"calibration_id": calibration_id, "run_id": run_id, **data}, indent=2))
    else:
        click.echo(render(calibration_id, run_id, data), nl=False)
