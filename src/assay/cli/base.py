"""What every command shares: the root group `assay` and its error boundary (AssayGroup: one line and a
documented exit code), the command and sub-group classes, the SIGINT/SIGTERM latch, the shared options and parameter
types, and the printing helpers. Imports no other module of assay.cli; every command module imports it."""

from __future__ import annotations

from pathlib import Path

import click

from assay.core.errors import AssayError

EXIT_CODES = {0: "success", 1: "error (bad input, configuration or warehouse state)", 2: "usage error",
              3: "judgments do not parse or resolve", 4: "a model is not available",
              5: "an external retriever failed", 6: "a gate rule failed",
              7: "a regression was found",
              8: "the run failed or was blocked (its answer stage could not run); it is stored for inspection",
              9: "a judgments file needs changes: not formatted (assay judgments fmt --check), or entries "
                 "moved, edited or gone in a changed corpus (assay judgments rebase)",
              130: "interrupted (Ctrl-C); the line printed says whether anything was stored",
              143: "terminated (SIGTERM); temporary files removed, the line printed says whether anything was "
                   "stored"}


class _SignalLatch:
    """While a command runs, the first SIGINT or SIGTERM raises KeyboardInterrupt and is remembered: DuckDB turns it
    into its own error ("Query interrupted"), so the boundary asks the latch, not the exception's type. The exception
    unwinds through every ``finally`` (temporary index directories and lake staging are removed, an open
    transaction rolls back); the command then exits 130 (SIGINT) or 143 (SIGTERM, 128 + 15, what a shell reports
    for a process SIGTERM ended). A second signal stops the process at once (the warehouse is safe: DuckDB keeps
    only committed transactions; a temporary directory left then is collected by the next run,
    assay.core.scratch)."""

    def __enter__(self):
        import signal
        import threading

        self.fired, self.signum, self.previous = False, None, {}
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        if self.fired:
            import os

            from assay.core import progress

            if progress.drawing():  # a bar is up and nothing will erase it: clear its line, show the cursor
                os.write(2, b"\r\x1b[2K\x1b[?25h")
            os.write(2, f"{_signalled(signum)} again; stopping now\n".encode())
            os._exit(128 + signum)
        self.fired, self.signum = True, signum
        from assay.store.warehouse import interrupt_queries

        interrupt_queries()  # a statement DuckDB is running stops now, and its transaction rolls back
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        import signal

        for signum, previous in self.previous.items():
            signal.signal(signum, previous)


def _signalled(signum) -> str:
    """How the line of a command stopped by ``signum`` begins."""
    import signal

    return "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"


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
    own code; a damaged warehouse 1; an interrupt (Ctrl-C, SIGINT) 130 and SIGTERM 143, saying what was kept.
    --debug shows the traceback instead."""

    command_class = AssayCommand
    group_class = _SubGroup

    def invoke(self, ctx):
        from assay.core import progress
        from assay.inputs import project
        from assay.store.warehouse import JOURNAL

        JOURNAL.reset()
        project.COMMAND.reset(cli=True)
        with _SignalLatch() as latch:
            try:
                result = super().invoke(ctx)
            except BaseException as exc:
                progress.close()  # a bar still up is erased before the error line
                self._fail(ctx, exc, latch.signum)
                raise
            finally:
                progress.reset()  # the library default again (in-process callers, tests)
                project.COMMAND.reset()
            if latch.fired:  # the command finished although interrupted: say what it kept
                self._fail(ctx, KeyboardInterrupt(), latch.signum)
            return result

    # `assay --help` lists the commands by task, in this order; a command missing here is listed under "Other"
    SECTIONS = (
        ("Start", ("init", "run", "report", "demo", "models")),
        ("Measure", ("show", "sweep", "ablate", "measures", "calibrate", "answers", "eval-trec")),
        ("Compare and gate", ("compare", "gate", "regress", "history")),
        ("Golden sets", ("judgments", "rescore")),
        ("Collections", ("import", "ingest")),
        ("The warehouse", ("runs", "tag", "sql", "export", "snapshot", "lake", "upgrade")),
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
    def _fail(ctx, exc: BaseException, signum: int | None) -> None:
        """Exit with one line for ``exc``; return (to re-raise it) when it is not ours to translate. ``signum``: the
        signal (SIGINT, SIGTERM) the latch caught while the command ran, if one was."""
        from assay.store.warehouse import JOURNAL, damage_error

        if ctx.params.get("debug"):
            return
        from assay.core.escape import terminal_lines

        if signum is not None or isinstance(exc, KeyboardInterrupt):
            import signal

            signum = signal.SIGINT if signum is None else signum
            click.echo(terminal_lines(JOURNAL.after_interrupt(_signalled(signum))), err=True)
            ctx.exit(128 + signum)
        if isinstance(exc, AssayError):
            click.echo(terminal_lines(f"error: {exc}"), err=True)
            ctx.exit(exc.exit_code)
        from assay.core.files import no_room

        why = no_room(exc)
        if why is not None:  # a write refused for want of room outside the warehouse and the lake's own writes
            click.echo(terminal_lines(f"error: cannot write: {why} ({str(exc).splitlines()[0]}); make room on the "
                                      "disk, then run the command again"), err=True)
            ctx.exit(1)
        if type(exc).__module__.lstrip("_").startswith("duckdb") and JOURNAL.last_path is not None:
            damaged = damage_error(exc, JOURNAL.last_path)  # found by a query, after the file opened
            if damaged is not None:
                click.echo(f"error: {damaged}", err=True)
                ctx.exit(damaged.exit_code)


warehouse_option = click.option(
    "--warehouse", "warehouse_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Warehouse file. Default: $ASSAY_WAREHOUSE, else the project's ([warehouse] path of its assay.toml, "
         "else warehouse/assay.duckdb beside it), else warehouse/assay.duckdb.",
)


snapshot_option = click.option(
    "--snapshot/--no-snapshot", "snapshot", default=None,
    help="After each run is stored, publish the read-only copy of the warehouse BI tools read, <name>-bi.duckdb "
         "beside it (default: [warehouse] snapshot in assay.toml, else off; `assay snapshot` publishes on demand).",
)


output_option = click.option(
    "-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), default=None,
    help="Write to FILE (atomically: a temp file, then a rename) instead of standard output; --format html "
         "needs it (-o - prints the page).")


def check_output(fmt: str, output) -> None:
    if fmt == "html" and output is None:
        raise click.UsageError("--format html writes a page: give -o FILE (or -o - for standard output)")
    if fmt == "html":
        from assay.core.extras import require

        require("html", "--format html")


def emit(text: str, output) -> None:
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
    say(f"wrote {output} ({size} bytes)")


def load_project(config_path):
    """The assay.toml a command was given, with its own [measures] dir registered (the discovered one's
    are registered for every command by the group callback)."""
    from assay.measures.registry import load_user_measures

    config = _read_config(config_path)
    if config_path is not None:
        load_user_measures(config)
    return config


def lake_location(target, config_path):
    """The lake at ``target`` (a directory or ``s3://bucket/prefix``) with assay.toml's ``[lake]`` endpoint and
    region (assay.store.lake.location); another scheme is refused here, before any work."""
    from assay.store.lake.location import lake_location as locate

    settings = _read_config(config_path).get("lake", {})
    return locate(target, settings)


def _read_config(config_path) -> dict:
    """assay.inputs.project.load_config: the parsed assay.toml in effect, {} without one. Its reader (tomllib,
    assay.retrieval.models: ~10 ms of imports) is loaded only when there is a file to read."""
    from assay.inputs import project

    if project.config_path(config_path) is None:
        return {}
    from assay.inputs.project import load_config

    return load_config(config_path)


def say_always(msg: str) -> None:
    """A line on stderr even under --quiet, drawn above any progress bar."""
    from assay.core import progress
    from assay.core.escape import terminal_lines

    progress.say(terminal_lines(msg), warning=True)


def say(msg: str) -> None:
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
    130 interrupted, 143 terminated by SIGTERM (one line says whether anything was stored).
    """
    from assay.core import progress
    from assay.inputs import project
    from assay.measures.registry import load_user_measures

    progress.configure(quiet=quiet)  # bars on stderr only when it is a terminal; AssayGroup.invoke resets
    project.COMMAND.note = say  # note: lines (no assay.toml, so a new warehouse here) print under --quiet too
    if verbose:  # said even under --quiet: asked for by name
        project.COMMAND.say = say_always
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
    from assay.core.errors import ConfigError
    from assay.inputs.corpus.options import check_encoding

    try:
        return check_encoding(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def _check_globs(ctx, param, value):
    from assay.core.errors import ConfigError
    from assay.inputs.corpus.options import Glob

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
    click.option("--max-expanded-mb", "max_expanded_mb", type=setting("max_expanded_mb"), default=None,
                 help="Most a PDF or DOCX may unpack to as it is read, in MB: a larger one is refused, named "
                      "(default: [run] max_expanded_mb in assay.toml, else 250)."),
    click.option("--read-timeout", "read_timeout_s", type=setting("read_timeout_s"), default=None,
                 help="Seconds one PDF or DOCX may take to read: a slower one is refused, named (default: [run] "
                      "read_timeout_s in assay.toml, else 300)."),
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

            read = {k: kw.pop(k) for k in ("include", "exclude", "encoding", "extensionless", "max_expanded_mb",
                                           "read_timeout_s")}
            verbose = kw.get("verbose") if own_verbose else kw.pop("verbose")
            options = from_config(load_config(kw.get("config_path")), max_file_mb=kw.get("max_file_mb"), **read)
            with reading(options, say=say, verbose=bool(verbose)):
                return f(*args, **kw)

        options = CORPUS_OPTIONS if own_verbose else CORPUS_OPTIONS + (click.option(
            "--verbose", is_flag=True, help="List every corpus file not read, with the reason."),)
        for option in reversed(options):
            command = option(command)
        return command

    return decorate if f is None else decorate(f)


corpus_option = click.option(
    "--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Corpus directory, or @NAME of an imported corpus (default: [project] corpus in assay.toml).")
judgments_option = click.option(
    "--judgments", "judgments_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Judgments JSONL file, or @NAME of an imported judgment set (default: [project] judgments in assay.toml).")


def parse_measures(texts: tuple[str, ...]):
    """The measures named (each once, in order), or the defaults when none is."""
    from assay.measures.registry import DEFAULT_MEASURES, parse_measure

    if not texts:
        return DEFAULT_MEASURES
    return tuple({m.name: m for m in (parse_measure(t) for t in texts)}.values())
