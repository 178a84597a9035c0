"""`assay init` (assay.inputs.scaffold): the skeleton's assay.toml is what load_config accepts, every table and
[run] setting in it; the install line of the CI files comes from --install or from what this assay's own
install shows, else init asks for --install and writes nothing; existing files are never replaced without
--force. tests/project/test_ci_files.py runs the generated CI files."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.runs import ablation, sweep
from assay.verdicts import gate
from assay.inputs import scaffold
from assay.cli import cli
from assay.inputs.corpus.options import CONFIG_KEYS
from assay.inputs.project import PROJECT_KEYS
from assay.inputs.project import load_config
from assay.inputs.settings import RUN_DEFAULTS, RUN_READING, SQL_DEFAULTS, TABLES
from assay.retrieval.pipelines import resolve_pipeline
from conftest import ROOT

SPEC = "assay @ git+https://git.example.org/tools/assay.git@v0.1.0"
# a commented setting: `#key = ...`, `#[table]`, or `#  ...` continuing a commented array; prose is `# text`
COMMENTED_SETTING = re.compile(r"^#(?=[^ ]|  )")


@pytest.fixture(autouse=True)
def no_env_warehouse(monkeypatch):
    monkeypatch.delenv("ASSAY_WAREHOUSE", raising=False)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def init(*args):
    """`assay init` with the install line given: what it would read from this test's own install depends on
    the machine (tests below give it an install record of their own)."""
    return invoke("init", *args, "--install", SPEC)


@pytest.fixture
def project(tmp_path):
    result = init(tmp_path / "proj")
    assert result.exit_code == 0, result.output
    return tmp_path / "proj"


def _uncommented(text: str) -> str:
    return "\n".join(line[1:] if COMMENTED_SETTING.match(line) else line for line in text.splitlines()) + "\n"


def test_init_writes_the_skeleton(tmp_path):
    result = init(tmp_path / "proj")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"wrote {tmp_path / 'proj' / name}" for name in scaffold.FILES]
    assert result.stderr.splitlines() == [
        f"CI installs {SPEC} (given with --install)",
        f"next: cd {tmp_path / 'proj'} && assay run && assay report && assay gate (assay.toml's [project] names the "
        "corpus and golden set; the CI files run these steps and more)"]


def test_init_without_a_directory_writes_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("init", "--install", SPEC)
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
    assert full["sql"] == SQL_DEFAULTS  # every [sql] key, with its default as the comment gives it
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


def test_install_sets_the_ci_requirement_and_the_hooks_repo(tmp_path):
    spec = SPEC
    result = invoke("init", tmp_path, "--install", spec)
    assert result.exit_code == 0 and "note:" not in result.stderr
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
])
def test_hooks_source(spec, expected):
    assert scaffold.hooks_source(spec) == expected


def test_init_refuses_to_overwrite_and_names_every_file(project):
    (project / "assay.toml").write_text("# mine\n")
    result = init(project)
    assert result.exit_code == 1
    assert result.stderr == (f"error: {project} already holds assay.toml, judgments/golden.jsonl, corpus/returns.md, "
                             "corpus/shipping.md, .github/workflows/assay.yml, .gitlab-ci.yml, "
                             ".pre-commit-config.yaml; nothing was written (give --force to replace them)\n")
    assert (project / "assay.toml").read_text() == "# mine\n"
    forced = init(project, "--force")
    assert forced.exit_code == 0
    assert f"replaced {project / 'assay.toml'}" in forced.stdout
    assert f"kept {project / '.gitignore'}" in forced.stdout  # it held every line already
    assert (project / "assay.toml").read_text() != "# mine\n"


def test_an_existing_gitignore_gets_the_lines_it_lacks(tmp_path):
    (tmp_path / ".gitignore").write_text("node_modules/\n/warehouse/")
    result = init(tmp_path)
    assert result.exit_code == 0, result.output
    assert f"appended to {tmp_path / '.gitignore'}" in result.stdout
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", "/warehouse/"]
    assert lines.count("/warehouse/") == 1 and "/report.html" in lines and "/junit.xml" in lines


def test_init_into_a_file_is_an_error(tmp_path):
    (tmp_path / "f").write_text("")
    result = init(tmp_path / "f")
    assert result.exit_code == 2 and "is a file" in result.stderr


# --- where CI installs assay from, when --install is not given ---------------------------------------------------

def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    """A git checkout of assay with one commit and no remote: what an editable install points at."""
    path = tmp_path / "assay-checkout"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("assay\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    return path


def with_remote(checkout: Path, url: str, pushed: bool = True) -> str:
    """Give the checkout a remote; ``pushed``: its HEAD on a remote-tracking branch, as a fetch leaves it (the
    remote is never contacted). Returns HEAD."""
    git(checkout, "remote", "add", "origin", url)
    head = git(checkout, "rev-parse", "HEAD")
    if pushed:
        git(checkout, "update-ref", "refs/remotes/origin/main", head)
    return head


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Record, first on sys.path, an install of assay as pip records one (PEP 610's direct_url.json in the
    dist-info; none for an install from a package index): importlib.metadata then finds this one."""
    def install(direct_url: dict | None, version: str = "9.9.9"):
        info = tmp_path / "site" / f"assay-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: assay\nVersion: {version}\n")
        if direct_url is not None:
            (info / "direct_url.json").write_text(json.dumps(direct_url))
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return install


@pytest.mark.parametrize("direct_url, expected", [
    (None, "assay==0.3.1"),  # from a package index
    ({"url": "https://git.example.org/x/assay.git", "vcs_info": {"vcs": "git", "commit_id": "0123abcd",
                                                                 "requested_revision": "v0.3.1"}},
     "assay @ git+https://git.example.org/x/assay.git@0123abcd"),
    ({"url": "ssh://git@git.example.org/x/assay.git", "vcs_info": {"vcs": "git", "commit_id": "0123abcd"}},
     "assay @ git+ssh://git@git.example.org/x/assay.git@0123abcd"),
    ({"url": "https://files.example.org/assay-0.3.1-py3-none-any.whl", "archive_info": {"hashes": {}}},
     "assay @ https://files.example.org/assay-0.3.1-py3-none-any.whl"),
    # nothing CI can fetch
    ({"url": "file:///srv/assay", "vcs_info": {"vcs": "git", "commit_id": "0123abcd"}}, None),
    ({"url": "https://hg.example.org/assay", "vcs_info": {"vcs": "hg", "commit_id": "0123abcd"}}, None),
    ({"url": "file:///tmp/assay-0.3.1-py3-none-any.whl", "archive_info": {}}, None),
    ({"url": "file:///nowhere/assay", "dir_info": {"editable": True}}, None),  # not a git checkout
])
def test_requirement_from_what_pip_recorded(direct_url, expected):
    assert scaffold.requirement_from(direct_url, "0.3.1")[0] == expected


@pytest.mark.parametrize("url, expected", [
    ("https://git.example.org/tools/assay.git", "https://git.example.org/tools/assay.git"),
    ("https://ci-bot:s3cret@git.example.org/tools/assay.git", "https://git.example.org/tools/assay.git"),
    ("git@github.com:tools/assay.git", "ssh://git@github.com/tools/assay.git"),
    ("ssh://git@git.example.org:2222/tools/assay.git", "ssh://git@git.example.org:2222/tools/assay.git"),
])
def test_an_editable_install_installs_its_checkouts_remote_at_head(checkout, url, expected):
    head = with_remote(checkout, url)
    direct_url = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    assert scaffold.requirement_from(direct_url, "0.1.0") == (
        f"assay @ git+{expected}@{head}", f"an editable install of {checkout}: its remote {expected} at HEAD {head}")


@pytest.mark.parametrize("url, pushed, why", [
    (None, False, "a git checkout with no remote"),
    ("/srv/git/assay.git", True, "whose remote origin is on this machine only"),
    ("https://git.example.org/tools/assay.git", False, "is on no branch of its remote (origin): push it"),
])
def test_an_editable_install_ci_cannot_fetch_is_refused(checkout, url, pushed, why):
    if url:
        with_remote(checkout, url, pushed)
    requirement, seen = scaffold.requirement_from({"url": checkout.as_uri(), "dir_info": {"editable": True}}, "0.1")
    assert requirement is None and seen.startswith(f"an editable install of {checkout}, ") and why in seen


def test_init_fills_the_install_line_from_this_assays_install(tmp_path, installed, checkout):
    head = with_remote(checkout, "git@git.example.org:tools/assay.git")
    installed({"url": checkout.as_uri(), "dir_info": {"editable": True}})
    result = invoke("init", tmp_path / "proj")
    assert result.exit_code == 0, result.output
    requirement = f"assay @ git+ssh://git@git.example.org/tools/assay.git@{head}"
    assert result.stderr.splitlines()[0] == (f"CI installs {requirement} (an editable install of {checkout}: its "
                                             f"remote ssh://git@git.example.org/tools/assay.git at HEAD {head})")
    github = yaml.safe_load((tmp_path / "proj" / ".github" / "workflows" / "assay.yml").read_text())
    assert github["jobs"]["golden-set"]["env"]["ASSAY_INSTALL"] == requirement
    gitlab = yaml.safe_load((tmp_path / "proj" / ".gitlab-ci.yml").read_text())
    assert gitlab["assay"]["variables"]["ASSAY_INSTALL"] == requirement
    hooks = yaml.safe_load((tmp_path / "proj" / ".pre-commit-config.yaml").read_text())["repos"][0]
    assert (hooks["repo"], hooks["rev"]) == ("ssh://git@git.example.org/tools/assay.git", head)


def test_init_from_a_package_index_installs_that_version(tmp_path, installed):
    installed(None, version="0.4.2")
    result = invoke("init", tmp_path / "proj")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:2] == [
        "CI installs assay==0.4.2 (assay 0.4.2 installed from a package index)",
        "note: the pre-commit hooks need assay's git repo and a tag or commit: edit repo and rev in "
        ".pre-commit-config.yaml, or give --install 'assay @ git+URL@TAG'"]
    assert 'ASSAY_INSTALL: "assay==0.4.2"' in (tmp_path / "proj" / ".gitlab-ci.yml").read_text()


def test_init_that_cannot_tell_asks_for_install_in_one_line_and_writes_nothing(tmp_path, installed, checkout):
    installed({"url": checkout.as_uri(), "dir_info": {"editable": True}})
    result = invoke("init", tmp_path / "proj")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"error: cannot tell where this assay was installed from (an editable install of "
                             f"{checkout}, a git checkout with no remote); give --install REQUIREMENT, the pip "
                             "requirement CI installs assay from, e.g. --install "
                             "'assay @ git+https://HOST/assay.git@TAG'\n")
    assert not (tmp_path / "proj").exists()
    given = invoke("init", tmp_path / "proj", "--install", "assay==0.1.0")  # --install still works
    assert given.exit_code == 0 and given.stderr.startswith("CI installs assay==0.1.0 (given with --install)\n")


def test_a_directory_install_of_a_checkout_installs_its_remote_too(checkout):
    head = with_remote(checkout, "https://git.example.org/tools/assay.git")
    assert scaffold.requirement_from({"url": checkout.as_uri(), "dir_info": {}}, "0.1") == (
        f"assay @ git+https://git.example.org/tools/assay.git@{head}",
        f"an install of {checkout}: its remote https://git.example.org/tools/assay.git at HEAD {head}")
