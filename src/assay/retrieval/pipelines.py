"""Named pipelines: built-in ones, user-defined ones from assay.toml, and CLI overrides.

The fully resolved settings are what a run stores and hashes.

assay.toml (all tables optional):

    [project]                  # the inputs every command defaults to (assay.inputs.project); flags replace these
    corpus = "corpus"          # relative to assay.toml, or @NAME of an imported corpus
    judgments = "judgments/golden.jsonl"
    pipeline = "bm25"          # `assay run`'s and `assay judgments check`'s pipeline

    [run]                      # defaults for every run
    chunker = "recursive"
    chunk_size = 600

    max_file_mb = 50           # largest corpus file read (not a retrieval setting: never stored or hashed)

    [pipelines.my-hybrid]      # a user-defined pipeline
    extends = "hybrid"         # start from a built-in or another user pipeline
    fusion = "weighted"
    weights = { bm25 = 0.3, dense = 0.7 }

    [measures]
    dir = "my_measures"        # more measure files, relative to assay.toml (assay.measures.registry)

    [corpus]                   # how a corpus directory is read (assay.inputs.corpus.options); flags replace these
    include = ["docs/**"]      # only files matching one of these globs
    exclude = ["*.bak.md"]     # never files matching one of these
    encoding = "cp1252"        # for files that are not UTF-8 (default: detected)
    extensionless = true       # read files without an extension as plain text

    [warehouse]
    path = "runs/assay.duckdb" # relative to assay.toml (default warehouse/assay.duckdb beside it; assay.inputs.project)

The file is found walking up from the current directory (assay.inputs.project); [gate], [ablate], [sweep] and
[lake] are read by the commands that use them. `assay init` writes every table, commented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.core.errors import ConfigError
from assay.core.escape import terminal
from assay.core.limits import setting_problem
from assay.inputs.settings import PIPELINE_DEFAULTS, RUN_DEFAULTS, RUN_READING

GENERATORS = ("extractive", "openai")
BUILTIN = {
    "bm25": {"lexical": True},
    "dense": {"dense": True},
    "hybrid": {"lexical": True, "dense": True, "fusion": "rrf"},
    "hybrid-rerank": {"lexical": True, "dense": True, "fusion": "rrf", "rerank": True},
    "dense-top3": {"dense": True, "final_k": 3},  # deliberately weakened: the ablation's sanity row
    "command": {"retriever": "command"},  # a program answering JSON lines (--command)
    "http": {"retriever": "http"},  # a service answering POSTed questions (--url)
    "trec-run": {"retriever": "trec-run"},  # a stored TREC run file (--run-file)
    "python": {"retriever": "python"},  # a Python callable, through assay.evaluate(retriever=...)
}
EXTERNAL = ("command", "http", "plugin", "trec-run", "python")
# How a trec-run pipeline orders each query's lines: by score, ties by docno descending (trec_eval's order),
# or by the file's rank column (the order `assay export --format trec` wrote, ties included).
RUN_ORDERS = ("score", "rank")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Pipeline:
    name: str
    settings: dict  # every key of SETTINGS, resolved

    def __getattr__(self, key):
        try:
            return self.settings[key]
        except KeyError:
            raise AttributeError(key) from None

    @property
    def stages(self) -> list[str]:
        s = self.settings
        if s["retriever"]:
            return ["external"] + (["rerank"] if s["rerank"] else []) + ["final"]
        stages = (["bm25"] if s["lexical"] else []) + (["dense"] if s["dense"] else [])
        if s["lexical"] and s["dense"]:
            stages.append("fusion")
        if s["rerank"]:
            stages.append("rerank")
        return stages + ["final"]


def max_file_mb(config: dict, given: float | None) -> float:
    """The per-file size limit of the corpus loader: --max-file-mb, else [run] max_file_mb, else 50."""
    return given if given is not None else config.get("run", {}).get("max_file_mb", RUN_READING["max_file_mb"])


def pipeline_names(config: dict) -> list[str]:
    return list(BUILTIN) + [n for n in config.get("pipelines", {}) if n not in BUILTIN]


def _pipeline_table(name: str, config: dict, seen: tuple = ()) -> dict:
    user = config.get("pipelines", {})
    if name in seen:
        raise ConfigError(f"pipeline {name!r} extends itself through {' -> '.join(seen)}")
    if name in user:
        table = dict(user[name])
        base = table.pop("extends", None)
        return {**(_pipeline_table(base, config, seen + (name,)) if base else {}), **table}
    if name in BUILTIN:
        return dict(BUILTIN[name])
    from assay.retrieval.external import plugin_names

    if name in plugin_names():
        return {"retriever": "plugin", "plugin": name}
    raise ConfigError(f"unknown pipeline {name!r}; available: {', '.join(pipeline_names(config) + plugin_names())}")


def resolve_pipeline(name: str, config: dict, overrides: dict) -> Pipeline:
    """Built-in or user pipeline, then [run] defaults, then CLI overrides (None = not given)."""
    settings = {**RUN_DEFAULTS, **PIPELINE_DEFAULTS}
    # [run]'s reading limits (max_file_mb, ...) say how to read the inputs: never a run's settings, config or hash
    settings.update({k: v for k, v in config.get("run", {}).items() if k not in RUN_READING})
    settings.update(_pipeline_table(name, config))
    settings.update({k: v for k, v in overrides.items() if v is not None})
    _validate(name, settings)
    return Pipeline(name, settings)


# control characters (a newline would forge a line of output) and the invisible bidirectional controls
_NOT_IN_A_URL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _validate(name: str, s: dict) -> None:
    where = f"pipeline {name!r}"
    for key, value in s.items():  # the Python API's options arrive here unchecked by click
        problem = setting_problem(key, value)
        if problem:
            raise ConfigError(f"{where}: {key} {problem}")
    if s["generator"] is not None:
        if s["generator"] not in GENERATORS:
            raise ConfigError(f"{where}: generator must be one of {', '.join(GENERATORS)}, got {s['generator']!r}")
        if s["generator"] == "openai" and not (s["generator_base_url"] and s["generator_model"]):
            raise ConfigError(f"{where}: the openai generator needs --generator-url and --generator-model "
                              "(any OpenAI-compatible chat-completions endpoint)")
        if s["judge_model"] or s["judge_base_url"]:
            if not (s["judge_model"] and s["judge_base_url"]):
                raise ConfigError(f"{where}: a judge needs both --judge-url and --judge-model")
            if s["judge_model"] == s["generator_model"]:
                raise ConfigError(f"{where}: the judge must be a different model from the generator "
                                  f"({s['judge_model']!r} judging itself is not a judgment)")
        for key in ("context_k", "max_quote"):
            if not isinstance(s[key], int) or s[key] < 1:
                raise ConfigError(f"{where}: {key.replace('_', '-')} must be an integer of at least 1")
    names = s["pass_env"]
    if not isinstance(names, list) or not all(isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in names):
        raise ConfigError(f"{where}: pass_env must be a list of environment variable names, got {names!r}")
    for key in ("url", "generator_base_url", "judge_base_url"):
        if isinstance(s.get(key), str) and _NOT_IN_A_URL.search(s[key]):
            raise ConfigError(f"{where}: {key} '{terminal(s[key])}' holds a control character; a URL has "
                              "none (percent-encode it: a newline is %0A)")
    if s["run_order"] not in RUN_ORDERS:
        raise ConfigError(f"{where}: run_order must be one of {', '.join(RUN_ORDERS)}, got {s['run_order']!r}")
    if s["retriever"] is not None:
        need = {"command": "command", "http": "url", "trec-run": "run_file", "plugin": "plugin"}
        if s["retriever"] not in EXTERNAL:
            raise ConfigError(f"{where}: retriever must be one of {', '.join(EXTERNAL)}, got {s['retriever']!r}")
        key = need.get(s["retriever"])
        if key and not s[key]:
            raise ConfigError(f"{where} needs --{key.replace('_', '-')} (or {key} = ... in assay.toml)")
        if s["lexical"] or s["dense"]:
            raise ConfigError(f"{where}: an external retriever runs alone; set lexical and dense to false")
        return
    if not (s["lexical"] or s["dense"]):
        raise ConfigError(f"{where} retrieves nothing: set lexical = true or dense = true")
    if s["lexical"] and s["dense"] and s["fusion"] not in ("rrf", "weighted"):
        raise ConfigError(f"{where} has two retrievers and needs fusion = \"rrf\" or \"weighted\"")
    for key in ("depth", "doc_depth", "rrf_k", "rerank_top_n"):
        if not isinstance(s[key], int) or s[key] < 1:
            raise ConfigError(f"{where}: {key.replace('_', '-')} must be an integer of at least 1, got {s[key]!r}")
    if s["final_k"] is not None and (not isinstance(s["final_k"], int) or s["final_k"] < 1):
        raise ConfigError(f"{where}: final_k must be an integer of at least 1, got {s['final_k']!r}")
    if s["weights"] is not None:
        if not isinstance(s["weights"], dict) or set(s["weights"]) - {"bm25", "dense"}:
            raise ConfigError(f"{where}: weights must be a table with keys bm25 and dense")
