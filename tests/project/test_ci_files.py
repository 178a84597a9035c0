"""The CI files `assay init` writes, run as their platforms run them, in a project `assay init` made.

Each file's shell steps run as bash scripts, in order, in a fresh copy of the project (a checkout), with the
variables the platform sets. What only the platform can do is done here, explicitly, by the rules the platform
documents, reading every key and path from the YAML so that a change to the files breaks these tests:

- the install step is replaced by the assay this test runs (its bin directory first on PATH, PYTHONPATH kept);
- GitHub: actions/checkout is the copy, setup-python the PATH; actions/cache/restore and save copy the cached
  path in and out of a store scoped by ref (a pull request reads its own ref, its base branch, then the default
  branch; an entry never changes once saved; restore-keys match by prefix, newest first); `if:` conditions and
  `${{ }}` are evaluated (the operators the files use, and no others); upload-artifact checks its paths; `gh` is a
  stand-in that records the comment it was asked to write;
- GitLab: `rules:` are evaluated; before_script and script run in one `bash -eo pipefail` shell, as the runner's
  does; the GitLab API is a real HTTP server on loopback serving, for the artifacts endpoint, the zip of the
  `artifacts: paths` of the latest successful job on a ref (only to the running job's token, or a project token),
  and merge request notes.

Twice on the default branch, then a change whose chunk size moves nDCG@10, then the default branch again, then a
change to the golden set: the second default-branch run is regressed against the first, the change against the
latest default-branch run, which the change's run never replaces.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml
from click.testing import CliRunner

from assay.cli import cli
from conftest import DEMO

VENV_BIN = Path(sys.executable).parent
SPEC = "assay @ git+https://git.example.org/tools/assay.git@v0.1.0"
INSTALL = 'pip install "$ASSAY_INSTALL"'
REPOSITORY = "team/shop-help"
RECORDED = re.compile(r"recorded run (\S+) ")
SUMMARY_HEAD = "<!-- assay -->\n### assay: against the default branch\n\n```text\n"
NO_BASELINE = "no baseline: the default branch has no earlier run of this pipeline with this golden set and corpus"


@pytest.fixture
def repo(tmp_path):
    """The project as `assay init` writes it: the repository every simulated checkout copies."""
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "repo"), "--install", SPEC], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return tmp_path / "repo"


def change_chunk_size(repo: Path, tmp_path: Path) -> Path:
    """A change to the project: [run] chunk_size 100 instead of the default 800 (comparable: same documents and
    questions), which moves nDCG@10 at the chunk level from 1.000 to 0.631 on the skeleton's golden set."""
    return edited(repo, tmp_path / "change", SMALLER_CHUNKS)


def edited(repo: Path, dest: Path, replacements: dict[str, str]) -> Path:
    """A copy of the project whose assay.toml has each key replaced by its value (each must be there)."""
    shutil.copytree(repo, dest)
    toml = dest / "assay.toml"
    text = toml.read_text()
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    toml.write_text(text)
    return dest


SMALLER_CHUNKS = {"#chunk_size = 800": "chunk_size = 100"}
STRICTER_GATE = {'rules = ["Success@3:doc>=0.5"]': 'rules = ["Success@3:doc>=0.99"]'}


def demo_project(repo: Path, tmp_path: Path) -> Path:
    """The project with the demo's corpus (10 documents) and golden set (71 questions) in place of the skeleton's,
    as a user puts in theirs: enough questions for a drop to be significant (smaller chunks take nDCG@10 at the
    chunk level from 0.625 to 0.392, p < 0.001)."""
    project = tmp_path / "demo-project"
    shutil.copytree(repo, project)
    shutil.rmtree(project / "corpus")
    shutil.copytree(DEMO / "corpus", project / "corpus")
    shutil.copy(DEMO / "judgments.jsonl", project / "judgments" / "golden.jsonl")
    return project


def moved_project(repo: Path, tmp_path: Path) -> Path:
    """The project with its inputs where a user keeps theirs, said only in assay.toml's [project]: the corpus in
    docs/help/, the golden set in eval/questions.jsonl, and a pipeline of its own (BM25 over 100-character
    chunks). The CI files are left as `assay init` wrote them."""
    project = edited(repo, tmp_path / "moved", {
        'corpus = "corpus"': 'corpus = "docs/help"',
        'judgments = "judgments/golden.jsonl"': 'judgments = "eval/questions.jsonl"',
        'pipeline = "bm25"': 'pipeline = "small-chunks"'})
    with (project / "assay.toml").open("a") as toml:
        toml.write('\n[pipelines.small-chunks]\nextends = "bm25"\nchunk_size = 100\n')
    (project / "docs").mkdir()
    (project / "corpus").rename(project / "docs" / "help")
    (project / "judgments").rename(project / "eval")
    (project / "eval" / "golden.jsonl").rename(project / "eval" / "questions.jsonl")
    return project


def moved_golden_set(project: Path, tmp_path: Path) -> Path:
    """A change to a question's wording in the moved project's golden set."""
    changed = tmp_path / "moved-golden-change"
    shutil.copytree(project, changed)
    golden = changed / "eval" / "questions.jsonl"
    golden.write_text(golden.read_text().replace("how long until my refund shows up", "when does my refund arrive"))
    return changed


def change_golden_set(repo: Path, tmp_path: Path) -> Path:
    """A change to a question's wording: a new golden set, so no earlier run is comparable."""
    changed = tmp_path / "golden-change"
    shutil.copytree(repo, changed)
    golden = changed / "judgments" / "golden.jsonl"
    golden.write_text(golden.read_text().replace("how long until my refund shows up", "when does my refund arrive"))
    return changed


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k != "ASSAY_WAREHOUSE" and not k.startswith(("GITHUB_", "CI_", "GITLAB_"))}
    bin_dir = tmp_path / "platform-bin"
    bin_dir.mkdir(exist_ok=True)
    env["PATH"] = os.pathsep.join([str(VENV_BIN), str(bin_dir), env.get("PATH", "")])
    env["CI"] = "true"
    return env


def checkout(repo: Path, tmp_path: Path, name: str) -> Path:
    """A fresh runner's checkout: the repository's files, nothing a previous job left."""
    workspace = tmp_path / "runs" / name
    shutil.copytree(repo, workspace)
    assert not (workspace / "warehouse").exists()
    return workspace


def run_ids(output: str) -> list[str]:
    return RECORDED.findall(output)


def regressed(candidate: str, baseline: str) -> str:
    return f"regress: candidate {candidate} against baseline {baseline} (--baseline latest)"


# --- GitHub Actions ---------------------------------------------------------------------------------------------

class Null:
    """A missing property in an expression: null, falsy, unequal to any string."""

    def __getattr__(self, name):
        return self

    def __bool__(self):
        return False

    def __eq__(self, other):
        return other is None or isinstance(other, Null)

    def __hash__(self):
        return 0


class Context:
    def __init__(self, values: dict):
        self._values = values

    def __getattr__(self, name):  # a hyphen in a name (a step id) reaches here as an underscore
        value = self._values.get(name, self._values.get(name.replace("_", "-"), Null()))
        return Context(value) if isinstance(value, dict) else value


EXPRESSION_TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\))|('[^']*')|([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)(\(\))?)")


def github_value(text: str, contexts: dict, status: str) -> object:
    """A GitHub Actions expression's value: property paths of the contexts, '...' strings, ==, !=, &&, ||, !,
    parentheses and the status functions. Anything else raises: a file that uses more must teach this test first."""
    functions = {"success": status == "success", "failure": status == "failure", "always": True,
                 "cancelled": False}
    python, pos = [], 0
    while pos < len(text.rstrip()):
        m = EXPRESSION_TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"this test cannot evaluate {text!r} (at {text[pos:]!r})")
        op, string, name, call = m.groups()
        if op:
            python.append({"||": "or", "&&": "and", "!": "not"}.get(op, op))
        elif string:
            python.append(repr(string[1:-1]))
        elif call:
            if name not in functions:
                raise ValueError(f"this test knows no function {name}() (in {text!r})")
            python.append(repr(functions[name]))
        else:
            root, *path = name.split(".")
            if root not in contexts:
                raise ValueError(f"this test knows no context {root!r} (in {text!r})")
            python.append(f"_[{root!r}]" + "".join(f".{p.replace('-', '_')}" for p in path))
        pos = m.end()
    return eval(" ".join(python), {"__builtins__": {}}, {"_": {k: Context(v) for k, v in contexts.items()}})


def github_condition(text: str, contexts: dict, status: str) -> bool:
    """A step's `if:` (with or without ${{ }}): success() && it, unless it calls a status function itself."""
    text = text.strip().removeprefix("${{").removesuffix("}}")
    value = bool(github_value(text, contexts, status))
    return value if re.search(r"\b(success|failure|always|cancelled)\(\)", text) else status == "success" and value


def substitute(text: str, contexts: dict) -> str:
    """``${{ expr }}`` in a value, as GitHub renders it (null as empty)."""
    def render(m):
        value = github_value(m.group(1), contexts, "success")
        return "" if isinstance(value, Null) else str(value).lower() if isinstance(value, bool) else str(value)
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", render, text)


@dataclass
class CacheEntry:
    key: str
    scope: str  # the ref that saved it
    copy: Path


@dataclass
class Job:
    workspace: Path
    status: str = "success"
    log: str = ""
    steps: dict[str, str] = field(default_factory=dict)  # step name -> success, failure or skipped
    summary: str = ""
    uploaded: list[str] = field(default_factory=list)

    def ran(self, name: str) -> str:
        return self.steps[name]


GH_STANDIN = """#!{python}
# gh, as far as these tests need it: `gh pr comment N [--edit-last] --body-file F`, recorded in $GH_LOG
import json, os, sys
args = sys.argv[1:]
log = os.environ["GH_LOG"]
assert args[:2] == ["pr", "comment"] and "--body-file" in args, args
assert os.environ.get("GH_TOKEN") and os.environ.get("GH_REPO"), "gh needs GH_TOKEN and GH_REPO here"
if os.environ.get("GH_STANDIN_REFUSES"):
    sys.exit("HTTP 403: Resource not accessible by integration")
comments = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
body = open(args[args.index("--body-file") + 1]).read()
if "--edit-last" in args:
    if not comments:
        sys.exit("no comments found for current user")
    comments[-1]["body"] = body
    comments[-1]["edits"] += 1
else:
    comments.append({{"pr": args[2], "repo": os.environ["GH_REPO"], "body": body, "edits": 0}})
open(log, "w").write("".join(json.dumps(c) + "\\n" for c in comments))
"""


class GitHub:
    """The workflow's job, run step by step as a runner runs it (see the module docstring)."""

    def __init__(self, repo: Path, tmp_path: Path):
        self.doc = yaml.safe_load((repo / ".github" / "workflows" / "assay.yml").read_text())
        (self.name, self.job), = self.doc["jobs"].items()
        assert self.job["defaults"]["run"]["shell"] == "bash"
        self.tmp = tmp_path
        self.env = base_env(tmp_path)
        gh = tmp_path / "platform-bin" / "gh"
        gh.write_text(GH_STANDIN.format(python=sys.executable))
        gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
        self.env["GH_LOG"] = str(tmp_path / "gh-comments.jsonl")
        self.cache: list[CacheEntry] = []
        self.runs = 0

    def comments(self) -> list[dict]:
        log = Path(self.env["GH_LOG"])
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def push(self, repo: Path, branch: str = "main") -> Job:
        return self._run(repo, "push", f"refs/heads/{branch}", branch, {})

    def pull_request(self, repo: Path, number: int, base: str = "main", fork: bool = False,
                     refuse_comment: bool = False) -> Job:
        head_repo = "someone/shop-help" if fork else REPOSITORY
        event = {"pull_request": {"number": number, "head": {"repo": {"full_name": head_repo}}}}
        extra = {"GH_STANDIN_REFUSES": "1"} if refuse_comment else {}
        return self._run(repo, "pull_request", f"refs/pull/{number}/merge", f"{number}/merge", event, base, extra)

    def _run(self, repo, event_name, ref, ref_name, event, base_ref="", extra_env=None) -> Job:
        self.runs += 1
        run_id = str(4000 + self.runs)
        workspace = checkout(repo, self.tmp, f"github-{self.runs}")
        summary = self.tmp / f"step-summary-{self.runs}.md"
        summary.write_text("")
        github = {"run_id": run_id, "run_attempt": "1", "ref": ref, "ref_name": ref_name, "event_name": event_name,
                  "base_ref": base_ref, "repository": REPOSITORY, "token": "ghs_standin",
                  "event": {"repository": {"default_branch": "main"}, **event}}
        contexts = {"github": github, "steps": {}, "env": {}, "runner": {"os": "Linux"}}
        env = {**self.env, **(extra_env or {}), "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
               "GITHUB_REF": ref, "GITHUB_REF_NAME": ref_name, "GITHUB_BASE_REF": base_ref,
               "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_RUN_ID": run_id, "GITHUB_RUN_ATTEMPT": "1",
               "GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(summary),
               "GITHUB_ENV": str(self.tmp / "github-env")}
        env.update({k: substitute(str(v), contexts) for k, v in self.job.get("env", {}).items()})
        job = Job(workspace)
        for number, step in enumerate(self.job["steps"]):
            name = step.get("name") or step["uses"]
            if not github_condition(step.get("if", "success()"), contexts, job.status):
                job.steps[name] = "skipped"
                continue
            ok = self._step(step, workspace, env, contexts, job, number, github)
            job.steps[name] = "success" if ok else "failure"
            if not ok:
                job.status = "failure"
        job.summary = summary.read_text()
        return job

    def _step(self, step, workspace, env, contexts, job, number, github) -> bool:
        uses = step.get("uses", "")
        with_ = {k: substitute(str(v), contexts) for k, v in step.get("with", {}).items()}
        if uses.startswith("actions/checkout@"):
            return True  # the workspace is the checkout
        if uses.startswith("actions/setup-python@"):
            assert with_["python-version"]
            return True  # the interpreter on PATH is this test's
        if uses.startswith("actions/cache/restore@"):
            self._restore(workspace, with_, github)
            return True
        if uses.startswith("actions/cache/save@"):
            self._save(workspace, with_, github)
            return True
        if uses.startswith("actions/upload-artifact@"):
            paths = with_["path"].split()
            job.uploaded = [p for p in paths if (workspace / p).exists()]
            assert with_.get("if-no-files-found") == "ignore" or job.uploaded == paths
            return True
        assert not uses, f"this test cannot run {uses}"
        script = step["run"]
        if script == INSTALL:
            return True  # replaced by the assay this test runs, first on PATH
        output = self.tmp / f"github-output-{number}"
        output.write_text("")
        step_env = {**env, "GITHUB_OUTPUT": str(output),
                    **{k: substitute(str(v), contexts) for k, v in step.get("env", {}).items()}}
        file = self.tmp / "step.sh"
        file.write_text(script)
        # GitHub's `shell: bash`: bash --noprofile --norc -eo pipefail {0}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(file)], cwd=workspace,
                              env=step_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        job.log += f"## {step.get('name', script)}\n{done.stdout}"
        if "id" in step:
            outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            contexts["steps"][step["id"]] = {"outputs": outputs, "outcome": "success" if done.returncode == 0
                                             else "failure"}
        return done.returncode == 0

    def _scopes(self, github) -> list[str]:
        """The refs whose caches a run may restore, in GitHub's order: its own, its base branch, the default."""
        scopes = [github["ref"]]
        if github["base_ref"]:
            scopes.append(f"refs/heads/{github['base_ref']}")
        scopes.append(f"refs/heads/{github['event']['repository']['default_branch']}")
        return list(dict.fromkeys(scopes))

    def _restore(self, workspace, with_, github) -> None:
        prefixes = [p for p in with_.get("restore-keys", "").splitlines() if p.strip()]
        for scope in self._scopes(github):
            entries = [e for e in reversed(self.cache) if e.scope == scope]  # newest first
            hit = next((e for e in entries if e.key == with_["key"]), None) or next(
                (e for p in prefixes for e in entries if e.key.startswith(p.strip())), None)
            if hit:
                shutil.copytree(hit.copy, workspace / with_["path"], dirs_exist_ok=True)
                return

    def _save(self, workspace, with_, github) -> None:
        if any(e.key == with_["key"] and e.scope == github["ref"] for e in self.cache):
            return  # an entry never changes once saved: GitHub warns and keeps the first
        copy = self.tmp / "cache" / str(len(self.cache))
        shutil.copytree(workspace / with_["path"], copy)
        self.cache.append(CacheEntry(with_["key"], github["ref"], copy))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_github_workflow_keeps_the_default_branchs_runs_and_regresses_changes_against_the_latest(repo, tmp_path):
    gh = GitHub(repo, tmp_path)
    restore = next(s for s in gh.job["steps"] if s.get("uses", "").startswith("actions/cache/restore@"))
    save = next(s for s in gh.job["steps"] if s.get("uses", "").startswith("actions/cache/save@"))
    assert restore["with"]["path"] == save["with"]["path"] == "warehouse/"  # where assay.toml's runs go
    assert restore["with"]["key"] == save["with"]["key"]

    first = gh.push(repo)
    assert first.status == "success", first.log
    [main1] = run_ids(first.log)
    assert NO_BASELINE in first.log and NO_BASELINE in first.summary
    assert first.summary.startswith(SUMMARY_HEAD) and f"\n## assay report `{main1}`\n" in first.summary
    assert first.ran("Keep the runs (default branch only)") == "success"
    assert first.ran("Comment on the pull request") == "skipped"
    assert [e.scope for e in gh.cache] == ["refs/heads/main"]
    assert set(first.uploaded) == {"report.html", "junit.xml", "assay-summary.md", "warehouse/"}
    assert 'failures="0"' in (first.workspace / "junit.xml").read_text()

    second = gh.push(repo)
    assert second.status == "success", second.log
    [main2] = run_ids(second.log)
    assert regressed(main2, main1) in second.log and regressed(main2, main1) in second.summary
    assert "0 regression(s): no significant regression" in second.summary
    assert len(gh.cache) == 2

    change = gh.pull_request(change_chunk_size(repo, tmp_path), 7)
    assert change.status == "success", change.log
    [pr] = run_ids(change.log)
    assert regressed(pr, main2) in change.log
    assert re.search(r"ok +nDCG@10:chunk +all +1\.000 +0\.631 ", change.summary), change.summary  # the measure moved
    assert change.summary.startswith(SUMMARY_HEAD) and f"\n## assay report `{pr}`\n" in change.summary
    assert change.ran("Keep the runs (default branch only)") == "skipped"
    assert [e.scope for e in gh.cache] == ["refs/heads/main"] * 2  # the change's run is not saved back
    assert gh.comments() == [{"pr": "7", "repo": REPOSITORY, "body": change.summary, "edits": 0}]
    for name in (main1, main2, pr):  # history works there: the default branch's runs, then this one
        assert name in change.summary.split("<summary>History</summary>")[1]

    third = gh.push(repo)
    assert third.status == "success", third.log
    [main3] = run_ids(third.log)
    assert regressed(main3, main2) in third.log  # not against the change's run, which was never saved
    history = third.summary.split("<summary>History</summary>")[1]
    assert main1 in history and main2 in history and main3 in history and pr not in history

    golden = gh.pull_request(change_golden_set(repo, tmp_path), 7, refuse_comment=True)
    assert golden.status == "success", golden.log  # no comparable baseline, and no comment allowed: neither fails
    assert NO_BASELINE in golden.summary and "regress: candidate" not in golden.log
    assert "::warning::no comment on pull request #7" in golden.log
    assert len(gh.comments()) == 1 and len(gh.cache) == 3


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_github_a_significant_drop_or_a_failing_gate_fails_the_job_and_all_is_still_published(repo, tmp_path):
    project = demo_project(repo, tmp_path)
    gh = GitHub(project, tmp_path)
    main = gh.push(project)
    assert main.status == "success", main.log
    [main1] = run_ids(main.log)

    drop = gh.pull_request(edited(project, tmp_path / "drop", SMALLER_CHUNKS), 11)
    assert drop.status == "failure"
    assert regressed(run_ids(drop.log)[0], main1) in drop.summary
    assert re.search(r"REGRESSED +nDCG@10:chunk +all +0\.625 +0\.392 ", drop.summary), drop.summary
    assert drop.ran("Gate") == "success" and drop.ran("No significant regression") == "failure"
    assert "dropped significantly against the default branch's latest run (exit code 7)" in drop.log
    assert gh.comments()[-1]["body"] == drop.summary  # commented before the job failed
    assert set(drop.uploaded) == {"report.html", "junit.xml", "assay-summary.md", "warehouse/"}

    strict = gh.pull_request(edited(project, tmp_path / "strict", STRICTER_GATE), 12)
    assert strict.status == "failure"
    assert strict.ran("Gate") == "failure" and "0 passed, 1 failed" in strict.log
    assert strict.ran("No significant regression") == "skipped"
    assert strict.ran("Publish the report, the gate's JUnit file, the summary and the runs") == "success"
    assert 'failures="1"' in (strict.workspace / "junit.xml").read_text()
    assert "0 regression(s): no significant regression" in strict.summary


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_github_workflow_follows_the_projects_inputs_in_assay_toml(repo, tmp_path):
    project = moved_project(repo, tmp_path)
    gh = GitHub(project, tmp_path)
    scripts = "\n".join(step["run"] for step in gh.job["steps"] if "run" in step)
    for named in ("--corpus", "--judgments", "--pipeline", "golden.jsonl"):  # assay.toml says these, not the file
        assert named not in scripts

    first = gh.push(project)
    assert first.status == "success", first.log
    [main1] = run_ids(first.log)
    assert "pipeline small-chunks: bm25 -> final" in first.log and "recursive(size=100, overlap=0)" in first.log
    assert NO_BASELINE in first.summary

    second = gh.push(project)
    assert second.status == "success", second.log
    [main2] = run_ids(second.log)
    assert regressed(main2, main1) in second.summary
    history = second.summary.split("<summary>History</summary>")[1]
    assert "for pipeline small-chunks" in history and main1 in history and main2 in history

    golden = gh.pull_request(moved_golden_set(project, tmp_path), 8)  # the golden set where [project] says it is
    assert golden.status == "success", golden.log
    assert NO_BASELINE in golden.summary and "regress: candidate" not in golden.log


@pytest.mark.parametrize("fork, runs", [(False, True), (True, False)])
def test_github_comments_only_where_the_token_may(repo, tmp_path, fork, runs):
    gh = GitHub(repo, tmp_path)
    step = next(s for s in gh.job["steps"] if s.get("name") == "Comment on the pull request")
    head = "someone/shop-help" if fork else REPOSITORY
    github = {"event_name": "pull_request", "repository": REPOSITORY,
              "event": {"pull_request": {"number": 3, "head": {"repo": {"full_name": head}}}}}
    assert github_condition(step["if"], {"github": github, "steps": {}}, "success") is runs


# --- GitLab CI --------------------------------------------------------------------------------------------------

class GitLabAPI(ThreadingHTTPServer):
    """The parts of GitLab's REST API the job calls, on loopback: the artifacts of a ref's latest successful job,
    and merge request notes."""

    project = "42"
    project_token = "glpat-standin"

    def __init__(self):
        super().__init__(("127.0.0.1", 0), GitLabHandler)
        self.jobs: list[dict] = []  # finished jobs: ref, name, status, artifacts (zip bytes)
        self.running_tokens: set[str] = set()
        self.notes: dict[str, list[dict]] = {}
        self.calls: list[tuple[str, str, str]] = []  # method, path, which token

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api/v4"


class GitLabHandler(BaseHTTPRequestHandler):
    server: GitLabAPI

    def log_message(self, *args):
        pass

    def _auth(self) -> str | None:
        if self.headers.get("JOB-TOKEN") in self.server.running_tokens:
            return "job"
        if self.headers.get("PRIVATE-TOKEN") == self.server.project_token:
            return "project"
        return None

    def _reply(self, code: int, body: bytes | dict | list, kind: str = "application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method: str):
        parts = urlsplit(self.path)
        auth = self._auth()
        self.server.calls.append((method, parts.path, auth or "none"))
        if auth is None:
            return self._reply(401, {"message": "401 Unauthorized"})
        base = f"/api/v4/projects/{self.server.project}/"
        if not parts.path.startswith(base):
            return self._reply(404, {"message": "404 Project Not Found"})
        rest = parts.path[len(base):]
        artifacts = re.fullmatch(r"jobs/artifacts/(.+)/download", rest)
        if method == "GET" and artifacts:
            ref, name = unquote(artifacts.group(1)), parse_qs(parts.query)["job"][0]
            done = [j for j in self.server.jobs if j["ref"] == ref and j["name"] == name and j["status"] == "success"]
            if not done:
                return self._reply(404, {"message": "404 Not found"})
            return self._reply(200, done[-1]["artifacts"], "application/zip")
        notes = re.fullmatch(r"merge_requests/(\d+)/notes(?:/(\d+))?", rest)
        if not notes:
            return self._reply(404, {"message": "404 Not Found"})
        if auth != "project":  # a job token may not write notes
            return self._reply(403, {"message": "403 Forbidden"})
        mine = self.server.notes.setdefault(notes.group(1), [])
        if method == "GET":
            return self._reply(200, sorted(mine, key=lambda n: -n["id"]))
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["body"]
        if method == "POST":
            mine.append({"id": len(mine) + 1, "body": body})
            return self._reply(201, mine[-1])
        note = next(n for n in mine if n["id"] == int(notes.group(2)))
        note["body"] = body
        return self._reply(200, note)

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PUT(self):
        self._route("PUT")


@pytest.fixture
def gitlab_api():
    if shutil.which("curl") is None:
        pytest.skip("the GitLab job fetches artifacts with curl, which this machine lacks")
    server = GitLabAPI()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def gitlab_rule(expression: str, env: dict) -> bool:
    """A `rules: if:` of the forms the file uses: `$VAR`, `$VAR == "text"`, joined by &&; others raise."""
    def term(text: str) -> bool:
        m = re.fullmatch(r'\s*\$(\w+)\s*(?:==\s*"([^"]*)")?\s*', text)
        if not m:
            raise ValueError(f"this test cannot evaluate the rule {expression!r}")
        value = env.get(m.group(1))
        return value == m.group(2) if m.group(2) is not None else bool(value)
    return all(term(t) for t in expression.split("&&"))


def included(job: dict, env: dict) -> bool:
    for rule in job["rules"]:
        if gitlab_rule(rule["if"], env):
            return rule.get("when", "on_success") != "never"
    return False


class GitLab:
    """The `assay` job, run as a runner runs it (see the module docstring)."""

    def __init__(self, repo: Path, tmp_path: Path, api: GitLabAPI):
        self.doc = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())
        (self.name, self.job), = ((k, v) for k, v in self.doc.items() if isinstance(v, dict) and "script" in v)
        self.tmp, self.api = tmp_path, api
        self.env = base_env(tmp_path)
        self.runs = 0

    def branch(self, repo: Path, branch: str = "main") -> Job:
        return self._run(repo, branch, {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": branch,
                                        "CI_COMMIT_REF_NAME": branch})

    def merge_request(self, repo: Path, iid: int, token: str | None = None) -> Job:
        """A merge request pipeline; ``token``: the ASSAY_GITLAB_TOKEN variable, unset when None."""
        return self._run(repo, f"refs/merge-requests/{iid}/head", self._merge_request_env(iid, token))

    def _merge_request_env(self, iid: int, token: str | None) -> dict:
        env = {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": str(iid),
               "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "change", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
               "CI_COMMIT_REF_NAME": "change"}
        return {**env, "ASSAY_GITLAB_TOKEN": token} if token is not None else env

    def _job_env(self, pipeline_env: dict, token: str) -> dict:
        env = {**self.env, "GITLAB_CI": "true", "CI_API_V4_URL": self.api.url, "CI_PROJECT_ID": self.api.project,
               "CI_JOB_NAME": self.name, "CI_JOB_TOKEN": token, "CI_DEFAULT_BRANCH": "main",
               "CI_COMMIT_REF_SLUG": re.sub(r"[^a-z0-9]+", "-", pipeline_env["CI_COMMIT_REF_NAME"].lower()),
               **pipeline_env}
        assert included(self.job, env)
        return {**env, **{k: str(v) for k, v in self.job["variables"].items()}}

    def entry(self, workspace: Path, containing: str, iid: int, token: str | None) -> subprocess.CompletedProcess:
        """The one `script:` entry holding ``containing``, run alone in ``workspace`` in a merge request's job."""
        [entry] = [e for e in self.job["script"] if containing in e]
        self.runs += 1
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", entry], cwd=workspace,
                              env=self._job_env(self._merge_request_env(iid, token), f"job-token-{self.runs}"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def _run(self, repo: Path, ref: str, pipeline_env: dict) -> Job:
        self.runs += 1
        token = f"job-token-{self.runs}"
        env = self._job_env(pipeline_env, token)
        workspace = checkout(repo, self.tmp, f"gitlab-{self.runs}")
        assert self.job["before_script"] == [INSTALL]  # replaced by the assay this test runs, first on PATH
        script = "\n".join(self.job["script"])
        file = self.tmp / "job.sh"
        file.write_text(script + "\n")
        self.api.running_tokens = {token}
        try:
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(file)], cwd=workspace,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        finally:
            self.api.running_tokens = set()
        job = Job(workspace, "success" if done.returncode == 0 else "failure", done.stdout)
        artifacts = self.job["artifacts"]
        assert artifacts["when"] == "always" and artifacts["reports"]["junit"] == "junit.xml"
        job.uploaded = [p for p in artifacts["paths"] if (workspace / p).exists()]
        self.api.jobs.append({"ref": ref if "CI_MERGE_REQUEST_IID" in pipeline_env else pipeline_env["CI_COMMIT_BRANCH"],
                              "name": self.name, "status": job.status, "artifacts": zipped(workspace, job.uploaded)})
        summary = workspace / "assay-summary.md"
        job.summary = summary.read_text() if summary.exists() else ""
        return job


def zipped(workspace: Path, paths: list[str]) -> bytes:
    """The artifacts archive GitLab keeps: each path, a directory with everything under it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in paths:
            path = workspace / name
            for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
                archive.write(file, file.relative_to(workspace).as_posix())
    return buffer.getvalue()


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_gitlab_job_keeps_the_default_branchs_runs_and_regresses_changes_against_the_latest(repo, tmp_path,
                                                                                             gitlab_api):
    lab = GitLab(repo, tmp_path, gitlab_api)
    assert "warehouse/" in lab.job["artifacts"]["paths"]  # where assay.toml's runs go

    first = lab.branch(repo)
    assert first.status == "success", first.log
    [main1] = run_ids(first.log)
    assert "no runs of main restored" in first.log and NO_BASELINE in first.log
    assert first.summary.startswith(SUMMARY_HEAD) and f"\n## assay report `{main1}`\n" in first.summary
    assert f"## assay report `{main1}`" in first.log  # the summary is in the job log too
    assert set(first.uploaded) == {"report.html", "junit.xml", "assay-summary.md", "assay-regress.txt", "warehouse/"}
    assert 'failures="0"' in (first.workspace / "junit.xml").read_text()

    second = lab.branch(repo)
    assert second.status == "success", second.log
    [main2] = run_ids(second.log)
    assert "restored the runs of main from its latest successful assay job" in second.log
    assert regressed(main2, main1) in second.log and regressed(main2, main1) in second.summary
    assert ("GET", "/api/v4/projects/42/jobs/artifacts/main/download", "job") in gitlab_api.calls

    change = lab.merge_request(change_chunk_size(repo, tmp_path), 7, token=gitlab_api.project_token)
    assert change.status == "success", change.log
    [pr] = run_ids(change.log)
    assert regressed(pr, main2) in change.log
    assert re.search(r"ok +nDCG@10:chunk +all +1\.000 +0\.631 ", change.summary), change.summary
    assert "wrote the summary as a note on merge request !7" in change.log
    assert gitlab_api.notes["7"] == [{"id": 1, "body": change.summary}]
    for name in (main1, main2, pr):
        assert name in change.summary.split("<summary>History</summary>")[1]

    third = lab.branch(repo)
    assert third.status == "success", third.log
    [main3] = run_ids(third.log)
    assert regressed(main3, main2) in third.log  # the merge request's artifacts are never read back
    history = third.summary.split("<summary>History</summary>")[1]
    assert main1 in history and main2 in history and main3 in history and pr not in history

    golden = lab.merge_request(change_golden_set(repo, tmp_path), 7)  # no ASSAY_GITLAB_TOKEN: the job's own
    assert golden.status == "success", golden.log
    assert "restored the runs of main" in golden.log
    assert NO_BASELINE in golden.summary and "regress: candidate" not in golden.log
    assert "no ASSAY_GITLAB_TOKEN: the summary is in assay-summary.md in the artifacts" in golden.log
    assert gitlab_api.notes["7"] == [{"id": 1, "body": change.summary}]


def test_gitlab_note_is_edited_in_place_and_its_failure_fails_no_job(repo, tmp_path, gitlab_api):
    lab = GitLab(repo, tmp_path, gitlab_api)
    (tmp_path / "assay-summary.md").write_text("<!-- assay -->\nfirst\n")
    assert lab.entry(tmp_path, "ASSAY_GITLAB_TOKEN is set", 5, gitlab_api.project_token).returncode == 0
    (tmp_path / "assay-summary.md").write_text("<!-- assay -->\nsecond\n")
    gitlab_api.notes["5"].append({"id": 2, "body": "a reviewer's note"})
    edited_note = lab.entry(tmp_path, "ASSAY_GITLAB_TOKEN is set", 5, gitlab_api.project_token)
    assert edited_note.stdout == "wrote the summary as a note on merge request !5\n"
    assert gitlab_api.notes["5"] == [{"id": 1, "body": "<!-- assay -->\nsecond\n"},
                                     {"id": 2, "body": "a reviewer's note"}]
    refused = lab.entry(tmp_path, "ASSAY_GITLAB_TOKEN is set", 5, "glpat-revoked")
    assert refused.returncode == 0
    assert "HTTP Error 401: Unauthorized" in refused.stdout
    assert refused.stdout.endswith("no merge request note written (see the error above); the summary is in the "
                                   "artifacts\n")


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_gitlab_a_significant_drop_fails_the_job_after_the_gate_and_all_is_still_kept(repo, tmp_path, gitlab_api):
    project = demo_project(repo, tmp_path)
    lab = GitLab(project, tmp_path, gitlab_api)
    main = lab.branch(project)
    assert main.status == "success", main.log
    [main1] = run_ids(main.log)

    drop = lab.merge_request(edited(project, tmp_path / "drop", SMALLER_CHUNKS), 11, token=gitlab_api.project_token)
    assert drop.status == "failure"
    assert re.search(r"REGRESSED +nDCG@10:chunk +all +0\.625 +0\.392 ", drop.summary), drop.summary
    assert "0 failed" in drop.log  # the gate ran, and passed
    assert drop.log.rstrip().endswith("dropped significantly against the default branch's latest run (exit code 7): "
                                      "see assay-regress.txt")
    assert gitlab_api.notes["11"][0]["body"] == drop.summary
    assert set(drop.uploaded) == {"report.html", "junit.xml", "assay-summary.md", "assay-regress.txt", "warehouse/"}


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_gitlab_a_failing_gate_fails_the_job_and_is_not_read_back(repo, tmp_path, gitlab_api):
    lab = GitLab(repo, tmp_path, gitlab_api)
    strict = lab.branch(edited(repo, tmp_path / "strict", {**SMALLER_CHUNKS, **{
        'rules = ["Success@3:doc>=0.5"]': 'rules = ["nDCG@10>=0.9"]'}}))
    assert strict.status == "failure" and strict.log.rstrip().endswith("0 passed, 1 failed; exit code 6")
    assert 'failures="1"' in (strict.workspace / "junit.xml").read_text()
    assert {"report.html", "junit.xml", "assay-summary.md", "warehouse/"} <= set(strict.uploaded)
    after = lab.branch(repo)  # GitLab serves the latest *successful* pipeline's artifacts: none yet
    assert after.status == "success" and "no runs of main restored" in after.log and NO_BASELINE in after.log


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_gitlab_job_follows_the_projects_inputs_in_assay_toml(repo, tmp_path, gitlab_api):
    project = moved_project(repo, tmp_path)
    lab = GitLab(project, tmp_path, gitlab_api)
    for named in ("--corpus", "--judgments", "--pipeline", "golden.jsonl"):  # assay.toml says these, not the file
        assert named not in "\n".join(lab.job["script"])

    first = lab.branch(project)
    assert first.status == "success", first.log
    [main1] = run_ids(first.log)
    assert "pipeline small-chunks: bm25 -> final" in first.log and "recursive(size=100, overlap=0)" in first.log

    second = lab.branch(project)
    assert second.status == "success", second.log
    [main2] = run_ids(second.log)
    assert regressed(main2, main1) in second.summary
    history = second.summary.split("<summary>History</summary>")[1]
    assert "for pipeline small-chunks" in history and main1 in history and main2 in history


@pytest.mark.parametrize("env, runs", [
    ({"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7"}, True),
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"}, True),
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "change"}, True),
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "change", "CI_OPEN_MERGE_REQUESTS": "team/shop-help!7"},
     False),  # the merge request pipeline runs instead
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_TAG": "v1"}, False),
])
def test_gitlab_runs_once_per_change(repo, env, runs):
    job = yaml.safe_load((repo / ".gitlab-ci.yml").read_text())["assay"]
    assert included(job, env) is runs
