import pytest

from assay.core.errors import ConfigError
from assay.inputs.project import load_config
from assay.retrieval.pipelines import BUILTIN, pipeline_names, resolve_pipeline


def test_builtin_stages():
    assert resolve_pipeline("bm25", {}, {}).stages == ["bm25", "final"]
    assert resolve_pipeline("dense", {}, {}).stages == ["dense", "final"]
    assert resolve_pipeline("hybrid", {}, {}).stages == ["bm25", "dense", "fusion", "final"]
    assert resolve_pipeline("hybrid-rerank", {}, {}).stages == ["bm25", "dense", "fusion", "rerank", "final"]
    weak = resolve_pipeline("dense-top3", {}, {})
    assert weak.final_k == 3 and weak.stages == ["dense", "final"]


def test_toml_defaults_user_pipelines_and_overrides(tmp_path):
    path = tmp_path / "assay.toml"
    path.write_text('[run]\nchunk_size = 600\n\n[pipelines.mine]\nextends = "hybrid"\nfusion = "weighted"\n'
                    'weights = { bm25 = 0.3, dense = 0.7 }\n\n[pipelines.mine-deep]\nextends = "mine"\ndepth = 200\n')
    config = load_config(path)
    assert pipeline_names(config) == list(BUILTIN) + ["mine", "mine-deep"]
    p = resolve_pipeline("mine-deep", config, {"chunk_size": None, "rrf_k": 10})
    assert p.chunk_size == 600 and p.fusion == "weighted" and p.weights == {"bm25": 0.3, "dense": 0.7}
    assert p.depth == 200 and p.rrf_k == 10 and p.lexical and p.dense
    assert resolve_pipeline("mine", config, {"chunk_size": 300}).chunk_size == 300  # CLI beats assay.toml


def test_config_found_in_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_config(None) == {}
    (tmp_path / "assay.toml").write_text("[run]\ndepth = 7\n")
    assert resolve_pipeline("bm25", load_config(None), {}).depth == 7


@pytest.mark.parametrize("text, message", [
    ("[run]\ndeepth = 3\n", r"\[run\] has unknown setting 'deepth'"),
    ("[pipelines.x]\nlexcial = true\n", r"\[pipelines.x\] has unknown setting 'lexcial'"),
    ("[surprise]\n", "unknown table"),
    ("[run\n", "not valid TOML"),
])
def test_config_errors(tmp_path, text, message):
    path = tmp_path / "assay.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


@pytest.mark.parametrize("table, message", [
    ({"x": {"lexical": False}}, "retrieves nothing"),
    ({"x": {"lexical": True, "dense": True}}, "needs fusion"),
    ({"x": {"extends": "x"}}, "extends itself"),
    ({"x": {"extends": "bm25", "final_k": 0}}, "final_k must be an integer"),
    ({"x": {"extends": "hybrid", "weights": {"sparse": 1.0}}}, "weights must be a table"),
    ({"x": {"extends": "command", "command": "c", "pass_env": "HOME"}}, "pass_env must be a list of environment"),
    ({"x": {"extends": "command", "command": "c", "pass_env": ["A=B"]}}, r"variable names, got \['A=B'\]"),
    ({"x": {"extends": "bm25", "max_retry_wait_s": -1}}, "max_retry_wait_s must be a number at least 0"),
    ({"x": {"extends": "bm25", "max_reply_chars": 1.5}}, "max_reply_chars must be an integer from 0"),
])
def test_invalid_pipelines(table, message):
    with pytest.raises(ConfigError, match=message):
        resolve_pipeline("x", {"pipelines": table}, {})


def test_unknown_pipeline_lists_available():
    with pytest.raises(ConfigError, match="available: bm25, dense, hybrid, hybrid-rerank, dense-top3"):
        resolve_pipeline("nope", {}, {})


def test_the_reading_limits_of_run_never_enter_a_runs_settings():
    """[run] max_file_mb, max_expanded_mb and read_timeout_s bound how inputs are read: two runs that differ only
    in them retrieve alike and must hash alike (they once entered the settings, the stored config and its hash)."""
    from assay.core.hashing import config_hash
    from assay.inputs.settings import RUN_READING

    plain = resolve_pipeline("bm25", {}, {})
    limited = resolve_pipeline("bm25", {"run": {**{k: 1 for k in RUN_READING}, "depth": 7}}, {})
    assert not set(RUN_READING) & set(limited.settings)
    assert limited.settings["depth"] == 7
    assert config_hash({**limited.settings, "depth": plain.settings["depth"]}) == config_hash(plain.settings)
