"""Where a project is: the assay.toml a command reads and the warehouse it writes, found as git finds its
repository.

Configuration: ``--config FILE`` (``config_path=`` in Python) when given; else the first ``assay.toml``
in the current directory or any directory above it, up to the filesystem root. A ``.git`` directory does
not stop the walk: a project may live in a subfolder of a repository, or hold several repositories. The
directory of that file is the project's root.

Warehouse: ``--warehouse PATH`` (``warehouse=``), else ``$ASSAY_WAREHOUSE``, else ``[warehouse] path`` of
the project's assay.toml (relative to that file), else ``warehouse/assay.duckdb`` in the project's root;
with no assay.toml at all, ``warehouse/assay.duckdb`` in the current directory.

BI snapshot: after each stored run, a read-only copy of the warehouse beside it (assay.store.snapshot), where
``[warehouse] snapshot = true`` or ``--snapshot`` asks for it (``snapshot_enabled``).

Inputs: ``--corpus``, ``--judgments`` and ``--pipeline`` when given, else ``[project] corpus``, ``judgments`` and
``pipeline`` of the assay.toml in effect (paths relative to that file; ``@NAME`` names an imported collection),
else: no corpus or judgments is a usage error saying no assay.toml was found (exit code 2), and the pipeline is
bm25. Outside a project (no assay.toml found), a command that would create ``warehouse/assay.duckdb`` in the
current directory says so first, in a ``note:`` line.

What was used is said as ``config: ...``, ``warehouse: ...`` (and ``corpus: ...``, ``judgments: ...`` when read
from [project]) lines: on stderr under ``assay --verbose``; from the Python API, logged (logger ``assay.project``,
level INFO).
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.core.errors import ConfigError, UsageError

CONFIG_FILE = "assay.toml"
DEFAULT_WAREHOUSE = Path("warehouse") / "assay.duckdb"
ENV_VAR = "ASSAY_WAREHOUSE"
LOGGER = "assay.project"
# [project]: the inputs every command defaults to, and what `assay init` writes
PROJECT_KEYS = {"corpus": "corpus", "judgments": "judgments/golden.jsonl", "pipeline": "bm25"}
DEFAULT_PIPELINE = "bm25"
# [warehouse]: its file, and whether a read-only snapshot for BI tools is published after each run (assay.store.snapshot)
WAREHOUSE_KEYS = ("path", "snapshot")


class Command:
    """The running CLI command's part in discovery: the ``--config`` it was given (its warehouse follows that
    file) and where its ``config:`` / ``warehouse:`` lines go: to ``say`` under --verbose, else nowhere (the
    CLI never imports logging for them). Reset by every invocation; outside the CLI (the Python API)
    nothing is given and the lines are logged."""

    def __init__(self):
        self.reset()

    def reset(self, config=None, say=None, cli: bool = False) -> None:
        self.config = Path(config) if config is not None else None
        self.say, self.cli = say, cli
        self.note = None  # where the CLI prints note: lines (always, even under --quiet)

    @property
    def listening(self) -> bool:
        return not self.cli or self.say is not None

    def tell(self, line: str) -> None:
        self._said(line, self.say, "info")

    def warn(self, line: str) -> None:
        """A ``note:`` line said whatever --verbose: on stderr from the CLI, logged as a warning from Python."""
        self._said(line, self.note, "warning")

    def _said(self, line: str, sink, level: str) -> None:
        """To ``sink`` from the CLI (nowhere when it has none), else to the ``assay.project`` logger at ``level``."""
        if self.cli:
            if sink is not None:
                sink(line)
            return
        import logging

        getattr(logging.getLogger(LOGGER), level)(line)


COMMAND = Command()


def find_config(start: Path | None = None) -> Path | None:
    """The first assay.toml in ``start`` (default: the current directory) or a directory above it, or None.
    One in the current directory is returned as the relative path ``assay.toml``, as it always was."""
    here = Path.cwd() if start is None else Path(start).absolute()
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return Path(CONFIG_FILE) if start is None and directory == here else candidate
    return None


def config_path(given=None) -> Path | None:
    """The assay.toml in effect: ``given``, else the running command's --config, else the one found."""
    if given is not None:
        return Path(given)
    if COMMAND.config is not None:
        return COMMAND.config
    return find_config()


def describe_config(given=None) -> str:
    """The ``config:`` line for the assay.toml in effect."""
    if given is not None or COMMAND.config is not None:
        path = Path(given if given is not None else COMMAND.config)
        return f"config: {path.absolute()} ({'--config' if COMMAND.cli else 'config_path='})"
    found = find_config()
    cwd = Path.cwd()
    if found is None:
        return f"config: none (no {CONFIG_FILE} in {cwd} or any directory above it)"
    where = "the current directory" if not found.is_absolute() else f"found walking up from {cwd}"
    return f"config: {found.absolute()} ({where})"


def tell_config(given=None) -> Path | None:
    """Say which assay.toml is in effect (see ``Command.tell``); return it."""
    if COMMAND.listening:
        COMMAND.tell(describe_config(given))
    return config_path(given)


def warehouse_path(given=None, config=None) -> Path:
    """The warehouse file: ``given``, else $ASSAY_WAREHOUSE, else the project's (``config``: its
    assay.toml, default the one in effect), else warehouse/assay.duckdb."""
    return _warehouse(given, config)[0]


def tell_warehouse(given=None, config=None) -> Path:
    """Say which warehouse ``warehouse_path`` gives, and why (see ``Command.tell``); return it."""
    if not COMMAND.listening:
        return warehouse_path(given, config)
    path, source = _warehouse(given, config)
    COMMAND.tell(f"warehouse: {path.absolute()} ({source})")
    return path


def _warehouse(given, config) -> tuple[Path, str]:
    if given:
        return Path(given), "--warehouse" if COMMAND.cli else "warehouse="
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    toml = config_path(config)
    if toml is None:
        return DEFAULT_WAREHOUSE, f"the default: no {CONFIG_FILE} found"
    root = toml.parent
    configured = load_config(toml).get("warehouse", {}).get("path")
    if configured:
        return root / Path(configured).expanduser(), f"[warehouse] path in {toml.absolute()}"
    return root / DEFAULT_WAREHOUSE, f"the default beside {toml.absolute()}"


def snapshot_enabled(given: bool | None = None, config=None) -> bool:
    """Whether a command that stores a run publishes the BI snapshot after it (assay.store.snapshot): ``given``
    (--snapshot/--no-snapshot), else ``[warehouse] snapshot`` of the assay.toml in effect, else no: a copy costs
    time and disk that grow with the warehouse, so a project that has BI readers turns it on."""
    if given is not None:
        return given
    toml = config_path(config)
    if toml is None:
        return False
    return load_config(toml).get("warehouse", {}).get("snapshot", False)


def no_config_found() -> str:
    return f"no {CONFIG_FILE} found from {Path.cwd()} up"


def project_input(key: str, given=None, flag: str | None = None, config=None):
    """``given`` (a command's --corpus or --judgments), else ``[project] key`` of the assay.toml in effect
    (``config``: that file, default the one in effect), a path relative to that file (``@NAME`` kept as it is);
    else UsageError (exit code 2) saying what was looked for (``flag``, default ``--KEY``), and where."""
    if given is not None:
        return given
    flag = flag or f"--{key}"
    toml = config_path(config)
    if toml is None:
        raise UsageError(f"no {flag} given, and {no_config_found()} (assay init writes one, with [project] "
                         f"{key} = \"{PROJECT_KEYS[key]}\")")
    value = load_config(toml).get("project", {}).get(key)
    if value is None:
        raise UsageError(f"no {flag} given, and {toml} has no [project] {key} (add {key} = "
                         f"\"{PROJECT_KEYS[key]}\", a path relative to it)")
    path = value if value.startswith("@") else toml.parent / Path(value).expanduser()
    if COMMAND.listening:
        COMMAND.tell(f"{key}: {path if value.startswith('@') else Path(path).absolute()} ([project] {key} in "
                     f"{toml.absolute()})")
    return path


def project_pipeline(given=None) -> str:
    """``given`` (--pipeline), else ``[project] pipeline`` of the assay.toml in effect, else bm25."""
    if given is not None:
        return given
    toml = config_path()
    if toml is None:
        return DEFAULT_PIPELINE
    return load_config(toml).get("project", {}).get("pipeline", DEFAULT_PIPELINE)


def outside_project(path) -> str | None:
    """Why ``path`` is the warehouse when it is the default used for want of a project (no --warehouse,
    $ASSAY_WAREHOUSE or assay.toml): ``no assay.toml found from DIR up``; else None."""
    if os.environ.get(ENV_VAR) or config_path() is not None or Path(path) != DEFAULT_WAREHOUSE:
        return None
    return no_config_found()


def load_config(path: Path | None) -> dict:
    """The parsed assay.toml: the given path, else the one in effect (``config_path``: the
    running command's --config, else the first found walking up from the current directory), else {}."""
    if path is None:
        path = config_path()
        if path is None:
            return {}
    if not path.is_file():
        raise ConfigError(f"{path}: configuration file not found")
    import tomllib  # only a command that reads an assay.toml pays for the reader (a report never does)

    from assay.inputs.settings import RUN_DEFAULTS, RUN_READING, SETTINGS, TABLES

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); assay.toml must be UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - set(TABLES)
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; allowed: {', '.join(TABLES)}")
    for key, value in data.items():
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {key} must be a table ([{key}]), not {type(value).__name__}")
    for name, table in data.get("pipelines", {}).items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: pipelines.{name} must be a table ([pipelines.{name}]), "
                              f"not {type(table).__name__}")
    for key, value in data.get("measures", {}).items():
        if key != "dir":
            raise ConfigError(f"{path}: [measures] has unknown setting {key!r}; allowed: dir")
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: [measures] dir must be a directory path (a string), not {value!r}")
    for key, value in data.get("project", {}).items():
        if key not in PROJECT_KEYS:
            raise ConfigError(f"{path}: [project] has unknown setting {key!r}; allowed: {', '.join(PROJECT_KEYS)}")
        if not isinstance(value, str) or not value:
            what = "a pipeline name" if key == "pipeline" else "a path relative to assay.toml, or @NAME"
            raise ConfigError(f"{path}: [project] {key} must be {what} (a string), not {value!r}")
    for key, value in data.get("warehouse", {}).items():
        if key not in WAREHOUSE_KEYS:
            raise ConfigError(f"{path}: [warehouse] has unknown setting {key!r}; allowed: {', '.join(WAREHOUSE_KEYS)}")
        if key == "snapshot" and not isinstance(value, bool):
            raise ConfigError(f"{path}: [warehouse] snapshot must be true or false, not {value!r}")
        if key == "path" and (not isinstance(value, str) or not value):
            raise ConfigError(f"{path}: [warehouse] path must be a file path (a string), not {value!r}")
    if "corpus" in data:
        from assay.inputs.corpus.options import check_config

        check_config(path, data["corpus"])
    for key, value in data.get("sql", {}).items():
        from assay.core.limits import SQL
        from assay.inputs.settings import SQL_DEFAULTS

        if key not in SQL_DEFAULTS:
            raise ConfigError(f"{path}: [sql] has unknown setting {key!r}; allowed: {', '.join(SQL_DEFAULTS)}")
        problem = SQL[key].problem(value)
        if problem:
            raise ConfigError(f"{path}: [sql] {key} {problem}")
    for key, value in data.get("run", {}).items():
        if key not in RUN_DEFAULTS and key not in RUN_READING:
            raise ConfigError(f"{path}: [run] has unknown setting {key!r}; "
                              f"allowed: {', '.join(list(RUN_DEFAULTS) + list(RUN_READING))}")
        _check_number(path, "run", key, value)
    for name, table in data.get("pipelines", {}).items():
        for key, value in table.items():
            if key not in SETTINGS and key != "extends":
                raise ConfigError(f"{path}: [pipelines.{name}] has unknown setting {key!r}; "
                                  f"allowed: extends, {', '.join(SETTINGS)}")
            _check_number(path, f"pipelines.{name}", key, value)
    data["_path"] = str(path)
    return data


def _check_number(path, table: str, key: str, value) -> None:
    from assay.core.limits import setting_problem

    problem = setting_problem(key, value)
    if problem:
        raise ConfigError(f"{path}: [{table}] {key} {problem}")
