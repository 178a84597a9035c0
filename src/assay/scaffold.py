"""`assay init`: a project skeleton that runs as written.

The files are templates in ``assay/data/skeleton`` (data, not code), written under their project names:
an assay.toml with every table assay reads (tests/test_scaffold.py loads it, every commented setting
uncommented too, so it cannot drift from what assay accepts), a two-question golden set with the small
corpus it resolves against, a .gitignore, CI for GitHub Actions and GitLab CI, and a pre-commit config
using assay's own hooks. Existing files are never replaced without ``force``; a .gitignore that exists
gets the lines it lacks appended instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError, ProjectExists

SKELETON = Path(__file__).parent / "data" / "skeleton"
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
INSTALL_PLACEHOLDER = "<the pip requirement of assay, e.g. assay @ git+https://HOST/assay.git@TAG>"
HOOKS_PLACEHOLDER = ("<the git URL you install assay from>", "<its tag or commit>")


@dataclass(frozen=True)
class Written:
    path: str  # relative to the project directory
    action: str  # "wrote", "replaced", "appended to", "kept"


def installed_from() -> str | None:
    """The pip requirement this assay was installed from when it came from a git repository (PEP 610's
    direct_url.json): ``assay @ git+URL@COMMIT``; None for any other install."""
    from importlib import metadata

    try:
        raw = metadata.distribution("assay").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except ValueError:
        return None
    vcs = info.get("vcs_info") or {}
    if vcs.get("vcs") != "git" or not info.get("url") or not vcs.get("commit_id"):
        return None
    return f"assay @ git+{info['url']}@{vcs['commit_id']}"


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
    """Write the skeleton into ``directory`` (created when missing). Raises ProjectExists, naming every
    file that exists, unless ``force``; a .gitignore is merged, never replaced."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise AssayError(f"{directory} is a file, not a directory; give assay init a directory")
    install = install or installed_from() or INSTALL_PLACEHOLDER
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
