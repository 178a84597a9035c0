"""A project made by `assay init` runs with no flags: [project] corpus, judgments and pipeline of assay.toml
(assay.inputs.project.project_input) give run, report, gate, sweep, ablate, rescore, ingest and the judgments commands
their inputs, from the project's root or any folder below it; flags replace them. Outside a project the commands
say that no assay.toml was found, and where it was looked for."""

import json
import shutil

import pytest
from click.testing import CliRunner

from assay.inputs import project
from assay.cli import cli
from assay.core.errors import ConfigError, UsageError
from assay.inputs.project import load_config
from assay.store.warehouse import Warehouse
from conftest import MINI


@pytest.fixture(autouse=True)
def no_env_warehouse(monkeypatch):
    monkeypatch.delenv("ASSAY_WAREHOUSE", raising=False)


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture
def made(tmp_path, monkeypatch):
    """A project written by `assay init`, the current directory."""
    out = invoke("init", tmp_path / "proj", "--install", "assay @ git+https://git.example.org/tools/assay.git@v0.1.0")
    assert out.exit_code == 0, out.output
    monkeypatch.chdir(tmp_path / "proj")
    return tmp_path / "proj"


def runs_in(warehouse) -> list[tuple]:
    with Warehouse.open(warehouse, read_only=True) as wh:
        return wh.con.execute("SELECT run_id, pipeline, judgments_hash, kind FROM runs ORDER BY started_at").fetchall()


def test_init_writes_the_project_table(made):
    assert load_config(made / "assay.toml")["project"] == {"corpus": "corpus", "judgments": "judgments/golden.jsonl",
                                                          "pipeline": "bm25"}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_run_report_gate_and_judgments_need_no_flags_in_a_project(made):
    out = invoke("run")
    assert out.exit_code == 0, out.output
    run_id = out.stdout.strip()
    assert out.stderr.splitlines()[-1] == f"recorded run {run_id} (2 questions) in warehouse/assay.duckdb"
    out = invoke("report", "--format", "json")
    assert out.exit_code == 0 and json.loads(out.stdout)["run"]["run_id"] == run_id, out.output
    out = invoke("gate")
    assert out.exit_code == 0 and f"\n\ngate on run {run_id}\n" in out.stdout, out.output  # under the verdict
    out = invoke("judgments", "check")
    assert out.exit_code == 0 and "2 questions" in out.stdout, out.output
    out = invoke("judgments", "fmt", "--check")
    assert (out.exit_code, out.stderr) == (0, "judgments/golden.jsonl: formatted, 2 questions\n"), out.output
    out = invoke("rescore", "latest")
    assert out.exit_code == 0, out.output
    assert [r[3] for r in runs_in(made / "warehouse" / "assay.duckdb")] == ["retrieval", "rescore"]
    out = invoke("ingest")
    assert out.exit_code == 0 and out.stdout.startswith("already in the warehouse: 2 documents"), out.output


def test_from_a_subfolder_the_inputs_are_the_projects(made, monkeypatch):
    (made / "notes").mkdir()
    monkeypatch.chdir(made / "notes")
    out = invoke("--verbose", "run")
    assert out.exit_code == 0, out.output
    said = out.stderr.splitlines()
    assert f"corpus: {made / 'corpus'} ([project] corpus in {made / 'assay.toml'})" in said
    assert f"judgments: {made / 'judgments' / 'golden.jsonl'} ([project] judgments in {made / 'assay.toml'})" in said
    assert len(runs_in(made / "warehouse" / "assay.duckdb")) == 1
    assert not (made / "notes" / "warehouse").exists()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_flags_replace_the_project_table(made):
    shutil.copytree(MINI / "corpus", made / "other-corpus")
    shutil.copy(MINI / "judgments.jsonl", made / "other.jsonl")
    out = invoke("run", "--corpus", "other-corpus", "--judgments", "other.jsonl", "--pipeline", "bm25")
    assert out.exit_code == 0 and "(6 questions)" in out.stderr, out.output
    # the default pipeline comes from [project]
    toml = made / "assay.toml"
    toml.write_text(toml.read_text().replace('pipeline = "bm25"', 'pipeline = "short"')
                    + '\n[pipelines.short]\nextends = "bm25"\nfinal_k = 1\n')
    out = invoke("run")
    assert out.exit_code == 0, out.output
    out = invoke("run", "--pipeline", "bm25")
    assert out.exit_code == 0, out.output
    assert [r[1] for r in runs_in(made / "warehouse" / "assay.duckdb")] == ["bm25", "short", "bm25"]
    # a --config elsewhere brings its own [project]
    other = made / "elsewhere"
    other.mkdir()
    (other / "assay.toml").write_text('[project]\ncorpus = "../other-corpus"\njudgments = "../other.jsonl"\n')
    out = invoke("run", "--config", other / "assay.toml")
    assert out.exit_code == 0 and "(6 questions)" in out.stderr, out.output
    assert (other / "warehouse" / "assay.duckdb").is_file()


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_sweep_and_ablate_need_no_flags_in_a_project(made):
    toml = made / "assay.toml"
    toml.write_text(toml.read_text().replace("[ablate] ", "[ablate]\nrungs = [{ pipeline = \"bm25\", label = "
                                                       "\"baseline\" }, { pipeline = \"top1\", label = \"weakened\", "
                                                       "weakened = true }]\n#", 1)
                    + '\n[pipelines.top1]\nextends = "bm25"\nfinal_k = 1\n')
    out = invoke("sweep", "--size", "200", "--size", "400", "--format", "json")
    assert out.exit_code == 0, out.output
    out = invoke("ablate", "--format", "json")
    assert out.exit_code in (0, 6), out.output
    assert [r["label"] for r in json.loads(out.stdout)["rungs"]] == ["baseline", "weakened"]


def test_outside_a_project_commands_say_no_assay_toml_was_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = invoke("run")
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr == (f"error: no --corpus given, and no assay.toml found from {tmp_path} up (assay init writes "
                          "one, with [project] corpus = \"corpus\")\n")
    out = invoke("run", "--corpus", MINI / "corpus")
    assert out.exit_code == 2 and out.stderr.startswith("error: no --judgments given, and no assay.toml found from ")
    for argv, what in ((["judgments", "check"], "JUDGMENTS_PATH"), (["judgments", "fmt"], "FILE"),
                       (["judgments", "add"], "FILE"), (["ingest"], "CORPUS_DIR"), (["sweep"], "--corpus"),
                       (["ablate"], "--corpus"), (["rescore", "latest"], "--judgments")):
        out = invoke(*argv)
        assert out.exit_code == 2 and out.stderr.startswith(f"error: no {what} given, and no assay.toml found from "
                                                            f"{tmp_path} up"), (argv, out.output)
    out = invoke("report")
    assert (out.exit_code, out.stderr) == (1, f"error: no warehouse at warehouse/assay.duckdb (no assay.toml found "
                                              f"from {tmp_path} up, so the default here); `assay run` or `assay "
                                              "ingest` creates one\n")
    assert not (tmp_path / "warehouse").exists()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_outside_a_project_a_new_warehouse_is_announced_and_stdout_stays_clean(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--quiet", "run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl"]
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    assert out.stderr == (f"note: no assay.toml found from {tmp_path} up; using ./warehouse/assay.duckdb, a new "
                          "warehouse (`assay init` makes a project)\n")
    assert out.stdout.strip() == runs_in(tmp_path / "warehouse" / "assay.duckdb")[0][0]
    out = invoke(*args)  # the warehouse exists now: nothing to announce
    assert out.exit_code == 0 and out.stderr == "", out.output
    out = invoke("runs", "--format", "json")
    assert out.exit_code == 0 and out.stderr == "" and len(json.loads(out.stdout)) == 2
    # with a warehouse named, or $ASSAY_WAREHOUSE, there is nothing to say
    out = invoke("--quiet", "ingest", MINI / "corpus", "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 0 and out.stderr == "", out.output
    monkeypatch.setenv("ASSAY_WAREHOUSE", str(tmp_path / "env.duckdb"))
    out = invoke("--quiet", "ingest", MINI / "corpus")
    assert out.exit_code == 0 and out.stderr == "", out.output


def test_a_project_table_lacking_an_input_says_which(tmp_path, monkeypatch):
    (tmp_path / "assay.toml").write_text('[project]\ncorpus = "corpus"\n')
    monkeypatch.chdir(tmp_path)
    out = invoke("run")
    assert (out.exit_code, out.stderr) == (2, "error: no --judgments given, and assay.toml has no [project] judgments "
                                              "(add judgments = \"judgments/golden.jsonl\", a path relative to it)\n")
    with pytest.raises(UsageError, match="no --judgments given"):
        project.project_input("judgments")
    assert project.project_input("corpus") == tmp_path.relative_to(tmp_path) / "corpus"
    assert project.project_pipeline() == "bm25" and project.project_pipeline("dense") == "dense"


def test_an_imported_collection_is_named_as_it_is(tmp_path):
    (tmp_path / "assay.toml").write_text('[project]\ncorpus = "@scifact"\njudgments = "@scifact/test"\n')
    project.COMMAND.config = tmp_path / "assay.toml"
    try:
        assert project.project_input("corpus") == "@scifact"
        assert project.project_input("judgments") == "@scifact/test"
        assert project.project_input("corpus", "given") == "given"
    finally:
        project.COMMAND.reset()


@pytest.mark.parametrize("text, message", [
    ('[project]\ncorpora = "c"\n', "[project] has unknown setting 'corpora'; allowed: corpus, judgments, pipeline"),
    ('[project]\ncorpus = 3\n', "[project] corpus must be a path relative to assay.toml, or @NAME (a string), not 3"),
    ('[project]\npipeline = ""\n', "[project] pipeline must be a pipeline name (a string), not ''"),
])
def test_the_project_table_is_checked(tmp_path, text, message):
    (tmp_path / "assay.toml").write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path / "assay.toml")
    assert str(exc.value) == f"{tmp_path / 'assay.toml'}: {message}"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_evaluate_takes_the_projects_inputs_too(made, monkeypatch, caplog):
    import logging

    import assay

    (made / "notes").mkdir()
    monkeypatch.chdir(made / "notes")
    result = assay.evaluate(lambda question, limit: ["returns.md"], name="fixed")
    assert result.warehouse == made / "warehouse" / "assay.duckdb"
    assert result["report"]["run"]["n_questions"] == 2
    monkeypatch.chdir(made.parent)
    with pytest.raises(UsageError, match=r"^no judgments= given, and no assay.toml found from "):
        assay.evaluate(lambda question, limit: [])
    caplog.set_level(logging.WARNING, logger="assay.project")
    result = assay.evaluate(lambda question, limit: [], judgments=made / "judgments" / "golden.jsonl",
                            corpus=made / "corpus")
    assert result.warehouse == project.DEFAULT_WAREHOUSE
    assert caplog.messages == [f"note: no assay.toml found from {made.parent} up; using ./warehouse/assay.duckdb, a "
                               "new warehouse (`assay init` makes a project)"]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_history_follows_the_projects_pipeline(made):
    toml = made / "assay.toml"
    toml.write_text(toml.read_text().replace('pipeline = "bm25"', 'pipeline = "short"')
                    + '\n[pipelines.short]\nextends = "bm25"\nfinal_k = 1\n')
    assert invoke("run").exit_code == 0 and invoke("run", "--pipeline", "bm25").exit_code == 0
    out = invoke("history", "--metric", "Success@1", "--level", "doc", "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["pipeline"] == "short" and len(json.loads(out.stdout)["points"]) == 1
