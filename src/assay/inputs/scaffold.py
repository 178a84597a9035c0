"""`assay init`: a project skeleton that runs as written.

The files are templates in ``assay/data/skeleton`` (data, not code), written under their project names:
an assay.toml with every table assay reads (tests/inputs/test_scaffold.py loads it, every commented setting
uncommented too, so it cannot drift from what assay accepts), a two-question golden set with the small
corpus it resolves against, a .gitignore, CI for GitHub Actions and GitLab CI, and a pre-commit config
using assay's own hooks. The CI files keep the default branch's runs between jobs and regress each run
against the newest of them (their comments weigh where the runs are kept; tests/project/test_ci_files.py runs
them). They install assay from a requirement that must work on the first CI run: --install, or what this
assay's own install record shows (:func:`install_for_ci`); never a placeholder. Existing files are never
replaced without ``force``; a .gitignore that exists gets the lines it lacks appended instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import AssayError, ProjectExists, UsageError

SKELETON = Path(__file__).parents[1] / "data" / "skeleton"
# project path -> template (files whose project names start with a dot are stored without it)
FILES = {
    "assay.toml": "assay.toml",
    "judgments/golden.jsonl": "judgments/golden.jsonl",
    "corpus/returns.md": "corpus/returns.md",
    "corpus/shipping.md": "corpus/shipping.md",
    ".gitignore": "gitignore",
    ".github/workflows/assay.yml": "github-workflow.yml",
    ".gitlab-ci.yml": "gitlab-ci.yml",
    ".pre-commit-config.yaml": "pre-commit-config.yaml",
}
MERGED = (".gitignore",)  # appended to, never refused
CI_FILES = (".github/workflows/assay.yml", ".gitlab-ci.yml")
HOOKS_PLACEHOLDER = ("<the git URL you install assay from>", "<its tag or commit>")
ASK = ("give --install REQUIREMENT, the pip requirement CI installs assay from, e.g. "
       "--install 'assay @ git+https://HOST/assay.git@TAG'")


@dataclass(frozen=True)
class Written:
    path: str  # relative to the project directory
    action: str  # "wrote", "replaced", "appended to", "kept"


@dataclass(frozen=True)
class Install:
    requirement: str  # what the CI files pip install
    origin: str  # where it came from, said by `assay init`


def install_for_ci(given: str | None = None) -> Install:
    """The pip requirement the CI files install assay from: ``given`` (--install), else the one this assay's
    own install shows (:func:`requirement_from`). Raises UsageError, asking for --install, when it cannot tell:
    a CI file with a requirement that does not install would fail its first run."""
    if given is not None:
        if not given.strip():
            raise UsageError(f"--install is empty; {ASK}")
        return Install(given.strip(), "given with --install")
    from importlib import metadata

    try:
        dist = metadata.distribution("assay")
    except metadata.PackageNotFoundError:
        raise UsageError(f"cannot tell where this assay was installed from (no installed distribution: it runs "
                         f"from source); {ASK}") from None
    raw = dist.read_text("direct_url.json")
    try:
        direct_url = json.loads(raw) if raw else None
    except ValueError:
        direct_url = {}
    requirement, seen = requirement_from(direct_url, dist.version)
    if requirement is None:
        raise UsageError(f"cannot tell where this assay was installed from ({seen}); {ASK}")
    return Install(requirement, seen)


def requirement_from(direct_url: dict | None, version: str) -> tuple[str | None, str]:
    """A pip requirement that installs, elsewhere, the assay pip recorded (PEP 610's direct_url.json, None
    when it came from a package index), and what was seen; None when no such requirement can be told.

    From an index: ``assay==VERSION``. From git: ``assay @ git+URL@COMMIT``. From a directory (an editable
    install of a checkout, say): that checkout's git remote and HEAD commit, when a remote-tracking branch
    holds the commit (a commit only on this machine would fail the first CI run). From an archive at an
    http(s) URL: that URL. Nothing on this machine alone (a file:// URL, a local path) can be installed in CI."""
    if direct_url is None:
        return f"assay=={version}", f"assay {version} installed from a package index"
    url = str(direct_url.get("url") or "")
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        if vcs.get("vcs") != "git" or not commit:
            return None, f"installed from {vcs.get('vcs') or 'a version control system'} at {url or '?'}"
        remote = _fetchable(url)
        if remote is None:
            return None, f"installed from the git repository {url or '?'}, which is on this machine only"
        return f"assay @ git+{remote}@{commit}", f"installed from git: {remote} at {commit}"
    if isinstance(direct_url.get("dir_info"), dict):
        editable = "an editable install" if direct_url["dir_info"].get("editable") else "an install"
        path = _local_path(url)
        if path is None:
            return None, f"{editable} of {url or '?'}"
        found, why = checkout_source(path)
        if found is None:
            return None, f"{editable} of {path}, {why}"
        remote, commit = found
        return f"assay @ git+{remote}@{commit}", f"{editable} of {path}: its remote {remote} at HEAD {commit}"
    archive = _fetchable(url) if isinstance(direct_url.get("archive_info"), dict) else None
    if archive is not None and archive.startswith(("https://", "http://")):
        return f"assay @ {archive}", f"installed from the archive {archive}"
    return None, f"installed from {url or 'an unknown place'}"


def checkout_source(path: Path) -> tuple[tuple[str, str] | None, str]:
    """The git URL and HEAD commit of the checkout at ``path`` that CI can fetch, or None and why not: no
    git, not a checkout, no remote, a remote on this machine only, or a HEAD on no remote-tracking branch."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        return None, "and git is not installed to read its origin"

    def git(*args: str) -> str | None:
        done = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "--verify", "HEAD")
    if not head:
        return None, "which is not a git checkout with a commit"
    remotes = (git("remote") or "").split()
    if not remotes:
        return None, "a git checkout with no remote"
    holding = (git("for-each-ref", "--contains", head, "--format=%(refname:lstrip=2)", "refs/remotes") or "").split()
    on = [r for r in remotes if any(ref.startswith(r + "/") for ref in holding)]
    if not on:
        return None, (f"whose HEAD {head[:12]} is on no branch of its remote{'s' if len(remotes) > 1 else ''} "
                      f"({', '.join(remotes)}): push it")
    remote = "origin" if "origin" in on else on[0]
    url = _fetchable(git("remote", "get-url", remote) or "")
    if url is None:
        return None, f"whose remote {remote} is on this machine only"
    return (url, head), ""


def _local_path(url: str) -> Path | None:
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" and parts.path else None


def _fetchable(url: str) -> str | None:
    """``url`` as pip accepts it after ``git+`` or ``@``, without credentials (a scp-like ``git@host:path`` as
    ssh://); None for a path or a file:// URL, which CI cannot fetch."""
    from urllib.parse import urlsplit, urlunsplit

    url = url.strip()
    scp = re.fullmatch(r"([\w.-]+@)?([\w.-]+):(?!//)(.+)", url)
    if scp and not re.fullmatch(r"[A-Za-z]", scp.group(2)):  # C:\path is a Windows path, not a host
        return f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3).lstrip('/')}"
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
        return None
    if parts.scheme in ("https", "http") and (parts.username or parts.password):
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return url


def hooks_source(install: str) -> tuple[str, str]:
    """pre-commit's repo and rev for assay's hooks, read from a git requirement; else placeholders."""
    found = re.fullmatch(r"\s*assay\s*@\s*git\+(\S+?)@([^\s@/#]+)\s*", install)
    return (found.group(1), found.group(2)) if found else HOOKS_PLACEHOLDER


def render(template: str, install: str) -> str:
    """A template's text with its placeholders filled (as YAML double-quoted strings)."""
    text = (SKELETON / template).read_text(encoding="utf-8")
    repo, rev = hooks_source(install)
    for key, value in (("install", install), ("hooks_repo", repo), ("hooks_rev", rev)):
        text = text.replace('"{{' + key + '}}"', json.dumps(value))
    return text


def init(directory: Path, install: str | None = None, force: bool = False) -> list[Written]:
    """Write the skeleton into ``directory`` (created when missing), the CI files installing ``install`` (by
    default what :func:`install_for_ci` finds). Raises ProjectExists, naming every file that exists, unless
    ``force``, and UsageError when the install requirement cannot be told; either way nothing is written. A
    .gitignore is merged, never replaced."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise AssayError(f"{directory} is a file, not a directory; give assay init a directory")
    install = install_for_ci(install).requirement
    existing = [name for name in FILES if name not in MERGED and (directory / name).exists()]
    if existing and not force:
        raise ProjectExists(f"{directory} already holds {', '.join(existing)}; nothing was written "
                            "(give --force to replace them)")
    written = []
    for name, template in FILES.items():
        target = directory / name
        text = render(template, install)
        if name in MERGED and target.is_file():
            written.append(Written(name, _merge(target, text)))
            continue
        action = "replaced" if target.exists() else "wrote"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(Written(name, action))
    return written


def _merge(target: Path, text: str) -> str:
    """Append to ``target`` the lines of ``text`` it lacks (comments with them); say what was done."""
    have = target.read_text(encoding="utf-8")
    lines = set(have.splitlines())
    missing = [line for line in text.splitlines() if line.startswith("#") or line not in lines]
    if all(line.startswith("#") for line in missing):
        return "kept"
    sep = "" if not have or have.endswith("\n") else "\n"
    target.write_text(have + sep + "\n".join(missing) + "\n", encoding="utf-8")
    return "appended to"
