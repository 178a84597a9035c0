"""`assay init` (assay.scaffold): the skeleton's assay.toml is what load_config accepts, every table and
[run] setting in it; the CI steps of both generated files run as written and pass; existing files are
never replaced without --force."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay import ablation, gate, scaffold, sweep
from assay.cli import cli
from assay.corpus.options import CONFIG_KEYS
from assay.project import PROJECT_KEYS
from assay.pipelines import RUN_DEFAULTS, RUN_READING, TABLES, load_config, resolve_pipeline
from conftest import ROOT

VENV_BIN = Path(sys.executable).parent
# a commented setting: `#key = ...`, `#[table]`, or `#  ...` continuing a commented array; prose is `# text`
COMMENTED_SETTING = re.compile(r"^#(?=[^ ]|  )")


@pytest.fixture(autouse=True)
def no_env_warehouse(monkeypatch):
    monkeypatch.delenv("ASSAY_WAREHOUSE", raising=False)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path):
    result = invoke("init", tmp_path / "proj")
    assert result.exit_code == 0, result.output
    return tmp_path / "proj"


def _uncommented(text: str) -> str:
    return "\n".join(line[1:] if COMMENTED_SETTING.match(line) else line for line in text.splitlines()) + "\n"


def test_init_writes_the_skeleton(tmp_path):
    result = invoke("init", tmp_path / "proj")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"wrote {tmp_path / 'proj' / name}" for name in scaffold.FILES]
    assert "note: the CI files install assay from a placeholder" in result.stderr
    assert f"next: cd {tmp_path / 'proj'} && assay run && assay report && assay gate" in result.stderr


def test_init_without_a_directory_writes_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("init")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "wrote assay.toml"
    assert "next: assay run" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".github", ".gitignore", ".gitlab-ci.yml",
                                                         ".pre-commit-config.yaml", "assay.toml", "corpus", "judgments"]


def test_the_assay_toml_loads_as_written_and_with_every_setting_uncommented(project):
    written = load_config(project / "assay.toml")
    assert written["gate"]["rules"] == ["Success@3:doc>=0.5"]
    full_path = project / "full.toml"
    full_path.write_text(_uncommented((project / "assay.toml").read_text()))
    full = load_config(full_path)  # every table and setting it documents is one assay accepts
    assert set(full) - {"_path"} == set(TABLES)
    assert set(full["run"]) == set(RUN_DEFAULTS) | set(RUN_READING)
    assert set(full["corpus"]) == set(CONFIG_KEYS)
    assert set(full["sweep"]) == set(sweep.KEYS)
    assert set(full["measures"]) == {"dir"} and set(full["warehouse"]) == {"path"}
    assert full["project"] == {"corpus": "corpus", "judgments": "judgments/golden.jsonl", "pipeline": "bm25"}
    assert set(full["project"]) == set(PROJECT_KEYS)
    # the tables load_config leaves to the commands that read them, read as they read them
    sweep.spec_from(full, {})
    assert [label for _, label, _ in ablation.ladder_from(full)] == ["baseline", "hybrid", "weakened"]
    assert gate.rules_from(full, ())
    for name in full["pipelines"]:
        resolve_pipeline(name, full, {})


def test_the_golden_set_is_formatted_and_resolves_without_lints(project, monkeypatch):
    monkeypatch.chdir(project)
    assert invoke("judgments", "fmt", "--check", "judgments/golden.jsonl").exit_code == 0
    check = invoke("judgments", "check", "judgments/golden.jsonl", "--corpus", "corpus", "--strict")
    assert check.exit_code == 0, check.output
    assert "lints: 0 (none)" in check.stdout
    lines = [json.loads(line) for line in (project / "judgments" / "golden.jsonl").read_text().splitlines()]
    assert [q["category"] for q in lines] == ["no_answer", "normal"]
    assert lines[1]["gold"][0]["quote"]


def _ci_commands(name: str, doc: dict) -> tuple[list[str], list[str]]:
    """The install commands and the others, in order, of a generated CI file."""
    if name == ".gitlab-ci.yml":
        job = doc["assay"]
        commands = job["before_script"] + job["script"]
    else:
        commands = [step["run"] for step in doc["jobs"]["golden-set"]["steps"] if "run" in step]
    install = [c for c in commands if "$ASSAY_INSTALL" in c]
    return install, [c for c in commands if c not in install]


def _artifacts(name: str, doc: dict) -> set[str]:
    if name == ".gitlab-ci.yml":
        artifacts = doc["assay"]["artifacts"]
        assert artifacts["reports"]["junit"] == "junit.xml" and artifacts["when"] == "always"
        return set(artifacts["paths"])
    upload = [s for s in doc["jobs"]["golden-set"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload[0]["if"] == "always()"
    return set(upload[0]["with"]["path"].split())


@pytest.mark.parametrize("name", scaffold.CI_FILES)
def test_the_generated_ci_steps_pass_when_run_as_a_script(project, name):
    doc = yaml.safe_load((project / name).read_text())
    install, steps = _ci_commands(name, doc)
    assert install == ['pip install "$ASSAY_INSTALL"']  # replaced here by the .venv's assay on PATH
    assert [s.split()[:3] for s in steps] == [["assay", "judgments", "fmt"], ["assay", "judgments", "check"],
                                              ["assay", "run", "--corpus"], ["assay", "report", "--format"],
                                              ["assay", "gate", "--junit"]]
    assert _artifacts(name, doc) == {"report.html", "junit.xml"}
    script = project / "ci.sh"
    script.write_text("set -e\n" + "\n".join(steps) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_WAREHOUSE"}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", str(script)], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout
    assert (project / "report.html").stat().st_size > 0
    assert 'failures="0"' in (project / "junit.xml").read_text()
    assert (project / "warehouse" / "assay.duckdb").is_file()


def test_install_sets_the_ci_requirement_and_the_hooks_repo(tmp_path):
    spec = "assay @ git+https://git.example.org/tools/assay.git@v0.1.0"
    result = invoke("init", tmp_path, "--install", spec)
    assert result.exit_code == 0 and "placeholder" not in result.stderr
    gitlab = yaml.safe_load((tmp_path / ".gitlab-ci.yml").read_text())
    assert gitlab["assay"]["variables"]["ASSAY_INSTALL"] == spec
    github = yaml.safe_load((tmp_path / ".github" / "workflows" / "assay.yml").read_text())
    assert github["jobs"]["golden-set"]["env"]["ASSAY_INSTALL"] == spec
    hooks = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())["repos"][0]
    assert (hooks["repo"], hooks["rev"]) == ("https://git.example.org/tools/assay.git", "v0.1.0")


def test_the_pre_commit_config_names_the_repositorys_hooks(project):
    defined = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    used = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert [hook["id"] for hook in used] == list(defined)
    check = next(hook for hook in used if hook["id"] == "assay-judgments-check")
    assert check["args"] == ["judgments/golden.jsonl", "--corpus", "corpus"]  # the skeleton's own paths


@pytest.mark.parametrize("spec, expected", [
    ("assay @ git+https://h/x/assay.git@v1.2", ("https://h/x/assay.git", "v1.2")),
    ("assay@git+ssh://git@h/assay.git@0123abcd", ("ssh://git@h/assay.git", "0123abcd")),
    ("assay==0.1.0", scaffold.HOOKS_PLACEHOLDER),
    ("assay @ git+https://h/assay.git", scaffold.HOOKS_PLACEHOLDER),  # no rev: pre-commit needs one
    (scaffold.INSTALL_PLACEHOLDER, scaffold.HOOKS_PLACEHOLDER),
])
def test_hooks_source(spec, expected):
    assert scaffold.hooks_source(spec) == expected


def test_init_refuses_to_overwrite_and_names_every_file(project):
    (project / "assay.toml").write_text("# mine\n")
    result = invoke("init", project)
    assert result.exit_code == 1
    assert result.stderr == (f"error: {project} already holds assay.toml, judgments/golden.jsonl, corpus/returns.md, "
                             "corpus/shipping.md, .github/workflows/assay.yml, .gitlab-ci.yml, "
                             ".pre-commit-config.yaml; nothing was written (give --force to replace them)\n")
    assert (project / "assay.toml").read_text() == "# mine\n"
    forced = invoke("init", project, "--force")
    assert forced.exit_code == 0
    assert f"replaced {project / 'assay.toml'}" in forced.stdout
    assert f"kept {project / '.gitignore'}" in forced.stdout  # it held every line already
    assert (project / "assay.toml").read_text() != "# mine\n"


def test_an_existing_gitignore_gets_the_lines_it_lacks(tmp_path):
    (tmp_path / ".gitignore").write_text("node_modules/\n/warehouse/")
    result = invoke("init", tmp_path)
    assert result.exit_code == 0, result.output
    assert f"appended to {tmp_path / '.gitignore'}" in result.stdout
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", "/warehouse/"]
    assert lines.count("/warehouse/") == 1 and "/report.html" in lines and "/junit.xml" in lines


def test_init_into_a_file_is_an_error(tmp_path):
    (tmp_path / "f").write_text("")
    result = invoke("init", tmp_path / "f")
    assert result.exit_code == 2 and "is a file" in result.stderr
