"""Fuzz: assay.toml of any shape is read (project.load_config) and used (resolve_pipeline,
gate.rules_from, ablation.ladder_from, sweep.spec_from) raising only AssayError subclasses
(ConfigError, exit code 1), never a traceback of another type."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st
import pytest

from assay.verdicts import gate
from assay.runs.ablation import ladder_from
from assay.core.errors import AssayError
from assay.inputs.project import load_config
from assay.inputs.settings import RUN_DEFAULTS, SETTINGS
from assay.retrieval.pipelines import pipeline_names, resolve_pipeline
from assay.runs.sweep import KEYS, spec_from
from .strategies import fuzz
from conftest import scratch_dir

WORKDIR = scratch_dir("assay-fuzz-config-")
TOML_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def toml_value(value) -> str:
    """A TOML literal for a str, int, float, bool, list or dict (an inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


SCALAR = st.one_of(st.booleans(), st.integers(-2, 3), st.sampled_from([0, -1, 2**63 - 1, 10**6]),
                   st.floats(allow_nan=True), TOML_TEXT,
                   st.sampled_from(["bm25", "hybrid", "recursive", "document", "rrf", "nDCG@10", "Success@3:doc>=0.5",
                                    "SpanRecall@1000tok", "x[form=gap]>=0.5", "openai", "command"]))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(TOML_TEXT, inner, max_size=3)), max_leaves=6)
RUNG = st.dictionaries(st.sampled_from(["pipeline", "label", "weakened", "other"]), VALUE, max_size=4)
TABLES = {
    "run": st.dictionaries(st.sampled_from(list(RUN_DEFAULTS) + ["max_file_mb", "bogus"]), VALUE, max_size=3),
    "pipelines": st.dictionaries(st.one_of(st.sampled_from(["bm25", "mine", "other"]), TOML_TEXT),
                                 st.dictionaries(st.sampled_from(list(SETTINGS) + ["extends"]), VALUE, max_size=3),
                                 max_size=2),
    "gate": st.dictionaries(st.sampled_from(["rules", "other"]), st.one_of(st.lists(VALUE, max_size=3), VALUE),
                            max_size=2),
    "ablate": st.dictionaries(st.sampled_from(["rungs", "other"]), st.one_of(st.lists(RUNG, max_size=3), VALUE),
                              max_size=2),
    "sweep": st.dictionaries(st.sampled_from(list(KEYS) + ["other"]), VALUE, max_size=3),
}
# Each table near-valid (the right keys, values of any type) or of the wrong type altogether.
CONFIG = st.fixed_dictionaries({}, optional={k: st.one_of(v, v, VALUE) for k, v in TABLES.items()})


def config_text(config: dict) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in config.items()) + "\n"


def loaded(text: str | bytes, strict: bool = True):
    """load_config of the text written to a real file: the config, or None after a ConfigError.

    ``strict``: any other exception fails the test; otherwise it also gives None, so the tests of
    what uses a config are not masked by load_config's own failures (test_load_config_any_file's)."""
    path = WORKDIR / "assay.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    try:
        return load_config(path)
    except AssayError as exc:
        assert exc.exit_code == 1 and str(exc).startswith(str(path))
        return None
    except Exception:
        if strict:
            raise
        return None


def only_assay_errors(call) -> None:
    try:
        call()
    except AssayError:
        pass


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(200)
@given(st.one_of(st.binary(max_size=80), TOML_TEXT, CONFIG.map(config_text)))
@example(b"\xff = 1\n")
@example("run = 3\n")
@example("[pipelines]\nx = 3\n")
def test_load_config_any_file(text):
    loaded(text)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(150)
@given(CONFIG)
@example({"pipelines": {"mine": {"extends": 3}}})
def test_every_pipeline_resolves_or_is_a_config_error(config):
    data = loaded(config_text(config), strict=False)
    if data is None:
        return
    for name in pipeline_names(data):
        only_assay_errors(lambda: resolve_pipeline(name, data, {}))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(150)
@given(CONFIG, st.lists(SCALAR.map(str), max_size=2))
@example({"gate": {"rules": [1]}}, [])
@example({"gate": 3}, [])
def test_gate_rules_from(config, cli_rules):
    data = loaded(config_text(config), strict=False)
    if data is not None:
        only_assay_errors(lambda: gate.rules_from(data, tuple(cli_rules), required=False))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(150)
@given(CONFIG)
@example({"ablate": 3})
def test_ablate_ladder_from(config):
    data = loaded(config_text(config), strict=False)
    if data is not None:
        only_assay_errors(lambda: ladder_from(data))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(150)
@given(CONFIG)
@example({"sweep": {"alpha": "x"}})
@example({"sweep": {"select": 3}})
@example({"sweep": 3})
def test_sweep_spec_from(config):
    data = loaded(config_text(config), strict=False)
    if data is not None:
        only_assay_errors(lambda: spec_from(data, {}))
