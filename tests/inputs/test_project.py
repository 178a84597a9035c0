"""Discovery (assay.inputs.project): the assay.toml found walking up, the warehouse resolved from it, said under
--verbose; the CLI and the Python API from a project's subfolder."""

import json
import logging
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.inputs import project
from assay.cli import cli
from assay.core.errors import ConfigError
from assay.inputs.project import load_config
from conftest import MINI


@pytest.fixture(autouse=True)
def no_env_warehouse(monkeypatch):
    monkeypatch.delenv("ASSAY_WAREHOUSE", raising=False)


@pytest.fixture
def proj(tmp_path):
    """A project: assay.toml with a gate rule, the mini corpus and judgments, and an empty subfolder."""
    root = tmp_path / "proj"
    shutil.copytree(MINI / "corpus", root / "corpus")
    (root / "judgments").mkdir()
    shutil.copy(MINI / "judgments.jsonl", root / "judgments" / "golden.jsonl")
    (root / "assay.toml").write_text('[gate]\nrules = ["Success@10:doc>=0.5"]\n')
    (root / "notes" / "deep").mkdir(parents=True)
    return root


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_find_config_walks_up_to_the_nearest(tmp_path, monkeypatch):
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "assay.toml").write_text("")
    assert project.find_config(tmp_path / "a" / "b" / "c") == tmp_path / "a" / "assay.toml"
    (tmp_path / "a" / "b" / "assay.toml").write_text("")
    assert project.find_config(tmp_path / "a" / "b" / "c") == tmp_path / "a" / "b" / "assay.toml"
    monkeypatch.chdir(tmp_path / "a")
    assert project.find_config() == Path("assay.toml")  # the current directory's, as a relative path


def test_a_git_directory_does_not_stop_the_walk(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    (tmp_path / "assay.toml").write_text("")
    assert project.find_config(tmp_path / "repo" / "src") == tmp_path / "assay.toml"


def test_a_directory_named_assay_toml_is_not_a_config(tmp_path):
    (tmp_path / "sub" / "assay.toml").mkdir(parents=True)
    (tmp_path / "assay.toml").write_text("")
    assert project.find_config(tmp_path / "sub") == tmp_path / "assay.toml"


def test_warehouse_resolution_order(proj, monkeypatch):
    monkeypatch.chdir(proj / "notes" / "deep")
    assert project.warehouse_path() == proj / "warehouse" / "assay.duckdb"
    (proj / "assay.toml").write_text('[warehouse]\npath = "store/runs.duckdb"\n')
    assert project.warehouse_path() == proj / "store" / "runs.duckdb"  # relative to assay.toml, not to here
    monkeypatch.setenv("ASSAY_WAREHOUSE", "env.duckdb")
    assert project.warehouse_path() == Path("env.duckdb")
    assert project.warehouse_path("given.duckdb") == Path("given.duckdb")


def test_without_a_project_the_warehouse_is_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if project.find_config() is not None:
        pytest.skip(f"an assay.toml above {tmp_path} ({project.find_config()}) makes this a project")
    assert project.warehouse_path() == Path("warehouse") / "assay.duckdb"


def test_the_warehouse_of_a_given_config_is_beside_it(proj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert project.warehouse_path(config=proj / "assay.toml") == proj / "warehouse" / "assay.duckdb"


@pytest.mark.parametrize("text, message", [
    ('[warehouse]\nfile = "x.duckdb"\n', "[warehouse] has unknown setting 'file'; allowed: path, snapshot"),
    ('[warehouse]\npath = 3\n', "[warehouse] path must be a file path (a string), not 3"),
    ('[warehouse]\npath = ""\n', "[warehouse] path must be a file path (a string), not ''"),
    ('[warehouse]\nsnapshot = "no"\n', "[warehouse] snapshot must be true or false, not 'no'"),
    ('[warehouse]\nsnapshot = 0\n', "[warehouse] snapshot must be true or false, not 0"),
])
def test_warehouse_table_is_checked(tmp_path, text, message):
    (tmp_path / "assay.toml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(tmp_path / "assay.toml")


def test_the_bi_snapshot_is_off_unless_the_project_or_the_flag_asks_for_it(proj, monkeypatch):
    monkeypatch.chdir(proj / "notes" / "deep")
    assert project.snapshot_enabled() is False  # the project's assay.toml does not say
    (proj / "assay.toml").write_text("[warehouse]\nsnapshot = false\n")
    assert project.snapshot_enabled() is False
    assert project.snapshot_enabled(True) is True  # --snapshot over the project's setting
    (proj / "assay.toml").write_text("[warehouse]\nsnapshot = true\n")
    assert project.snapshot_enabled() is True
    assert project.snapshot_enabled(False) is False


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_commands_from_a_subfolder_use_the_projects_config_and_warehouse(proj, monkeypatch):
    monkeypatch.chdir(proj / "notes" / "deep")
    run = invoke("run", "--corpus", proj / "corpus", "--judgments", proj / "judgments" / "golden.jsonl")
    assert run.exit_code == 0, run.output
    assert (proj / "warehouse" / "assay.duckdb").is_file()
    assert not (proj / "notes" / "deep" / "warehouse").exists()
    gate = invoke("gate")  # no --rule: the rules come from the project's assay.toml
    assert gate.exit_code == 0, gate.output
    assert "Success@10:doc>=0.5" in gate.stdout
    (proj / "assay.toml").write_text('[gate]\nrules = ["Success@1:doc>=1.0"]\n')
    assert invoke("gate").exit_code == 6


def test_verbose_says_which_config_and_warehouse(proj, monkeypatch):
    deep = proj / "notes" / "deep"
    monkeypatch.chdir(deep)
    result = invoke("--verbose", "--quiet", "ingest", proj / "corpus")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:2] == [
        f"config: {proj / 'assay.toml'} (found walking up from {deep})",
        f"warehouse: {proj / 'warehouse' / 'assay.duckdb'} (the default beside {proj / 'assay.toml'})"]
    given = invoke("--verbose", "runs", "--warehouse", proj / "warehouse" / "assay.duckdb")
    assert f"warehouse: {proj / 'warehouse' / 'assay.duckdb'} (--warehouse)" in given.stderr
    quiet = invoke("runs")
    assert "config:" not in quiet.stderr and "warehouse:" not in quiet.stderr


def test_group_verbose_and_a_commands_own_verbose_keep_their_meanings(proj, monkeypatch):
    monkeypatch.chdir(proj)
    (proj / "corpus" / "data.bin").write_bytes(b"\x00\x01")
    own = invoke("ingest", "corpus", "--verbose")  # ingest's --verbose: every file not read, with its reason
    assert own.exit_code == 0, own.output
    assert "data.bin" in own.stderr and "config:" not in own.stderr
    both = invoke("--verbose", "ingest", "corpus", "--verbose")
    assert "data.bin" in both.stderr
    assert f"config: {proj / 'assay.toml'} (the current directory)" in both.stderr
    assert f"warehouse: {proj / 'warehouse' / 'assay.duckdb'} (the default beside {proj / 'assay.toml'})" \
        in both.stderr


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_given_config_brings_its_warehouse(proj, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = invoke("--verbose", "run", "--corpus", proj / "corpus", "--judgments", proj / "judgments" / "golden.jsonl",
                 "--config", proj / "assay.toml")
    assert run.exit_code == 0, run.output
    assert f"config: {proj / 'assay.toml'} (--config)" in run.stderr
    assert (proj / "warehouse" / "assay.duckdb").is_file() and not (elsewhere / "warehouse").exists()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_evaluate_from_a_subfolder_writes_into_the_projects_warehouse(proj, monkeypatch, caplog):
    import assay

    monkeypatch.chdir(proj / "notes" / "deep")
    caplog.set_level(logging.INFO, logger="assay.project")
    result = assay.evaluate(lambda question, limit: ["storage/design.md"], corpus=proj / "corpus",
                            judgments=proj / "judgments" / "golden.jsonl", name="fixed")
    assert result.warehouse == proj / "warehouse" / "assay.duckdb"
    assert result.config == proj / "assay.toml"
    assert not (proj / "notes" / "deep" / "warehouse").exists()
    assert f"warehouse: {proj / 'warehouse' / 'assay.duckdb'} (the default beside {proj / 'assay.toml'})" \
        in caplog.messages
    monkeypatch.chdir(proj)
    runs = json.loads(invoke("runs", "--format", "json").stdout)
    assert [r["run_id"] for r in runs] == [result.run_id]
