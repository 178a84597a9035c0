"""The manual (mkdocs.yml, docs/) and the README: the site builds in strict mode, so no link, anchor or page
is broken or left out of the nav; the README stays short and its links lead somewhere; and every transcript
marked `<!-- checked -->` is run again and must print what the page shows.

A checked transcript is a fenced block right under a line starting `<!-- checked` (other comment lines may
stand between them). Its `$ COMMAND` lines are run in order, with bash, in a fresh empty directory, and the
lines under each (stdout and stderr together, as a terminal shows them) are its expected output. Three
commands are read rather than run: `$ cd DIR` moves into DIR, `$ cat FILE` writes the lines under it into
FILE (the page shows the file, so the page is what the next commands read), and `$ echo $?` expects the exit
code of the command before it. Mark only transcripts that print the same thing on every machine: no run ids,
times, absolute paths or `...` elisions.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

MKDOCS_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor, not ours


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # run from the config's directory: pymdownx.snippets reads README.md relative to it
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, env=MKDOCS_ENV, capture_output=True,
                          text=True, timeout=300)


def pages() -> list[Path]:
    return sorted(p for p in (ROOT / "docs").glob("*.md"))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_manual_builds_in_strict_mode(tmp_path):
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    for page in pages():  # every page is in the nav (strict: omitted_files), so each becomes a file of the site
        assert (tmp_path / "site" / page.with_suffix(".html").name).is_file(), page.name
    started = (tmp_path / "site" / "getting-started.html").read_text(encoding="utf-8")
    assert 'id="five-minutes-on-your-own-files"' in started and 'id="install"' in started  # the README's parts


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_broken_anchor_fails_the_build(tmp_path):
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr

    reports = tmp_path / "docs" / "reports.md"
    reports.write_text(reports.read_text(encoding="utf-8") + "\n[a gate](history-and-ci.md#no-such-section)\n",
                       encoding="utf-8")
    broken = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert broken.returncode == 1
    assert "does not contain an anchor '#no-such-section'" in broken.stderr


def test_the_readme_stays_short_and_its_links_lead_to_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300, "README.md is for a newcomer: move the detail into a page of docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 20  # the manual's pages and the picture
    for link in local:
        assert (ROOT / link).is_file(), f"README.md links to {link}, which does not exist"


@dataclass
class Transcript:
    where: str  # FILE:LINE of the block's first line
    steps: list[tuple[str, str]]  # (command, expected output)


def transcripts() -> list[Transcript]:
    found = []
    for path in [ROOT / "README.md", *pages()]:
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if not line.startswith("<!-- checked"):
                continue
            start = i + 1
            while lines[start].startswith("<!--"):
                start += 1
            assert lines[start] == "```", f"{path.name}:{i + 1}: a checked marker must stand above a ``` block"
            end = lines.index("```", start + 1)
            steps: list[tuple[str, list[str]]] = []
            for text in lines[start + 1:end]:
                if text.startswith("$ "):
                    steps.append((text[2:], []))
                else:
                    assert steps, f"{path.name}:{start + 2}: a checked transcript starts with a $ command"
                    steps[-1][1].append(text)
            found.append(Transcript(f"{path.relative_to(ROOT)}:{start + 1}",
                                    [(cmd, "\n".join(out)) for cmd, out in steps]))
    return found


TRANSCRIPTS = transcripts()


def test_the_checked_transcripts_are_found():
    # the markers this test was written with: the measures, their aliases, `assay init`, eval-trec
    assert len(TRANSCRIPTS) >= 5
    commands = [cmd for t in TRANSCRIPTS for cmd, _ in t.steps]
    for expected in ("assay measures", "assay measures --aliases",
                     "assay init shop-help --install 'assay @ git+https://git.example.org/tools/assay.git@v0.1.0'"):
        assert expected in commands


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=[t.where for t in TRANSCRIPTS])
def test_a_checked_transcript_prints_what_the_page_shows(transcript, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ASSAY_WAREHOUSE", "ASSAY_QUIET", "COLUMNS")}
    # the `assay` of the environment running the tests; unbuffered, so stdout and stderr interleave as printed
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1")
    cwd, last = tmp_path, None
    for command, expected in transcript.steps:
        if command.startswith("cd "):
            cwd = cwd / command[3:].strip()
            continue
        if command.startswith("cat "):
            (cwd / command[4:].strip()).write_text(expected + "\n", encoding="utf-8")
            continue
        if command == "echo $?":
            assert last is not None and expected == str(last.returncode), f"{transcript.where}: exit code"
            continue
        last = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=300)
        got = last.stdout.rstrip("\n")
        if got != expected:
            diff = "\n".join(difflib.unified_diff(expected.split("\n"), got.split("\n"), "the page", "the command",
                                                  lineterm=""))
            pytest.fail(f"{transcript.where}: `{command}` printed something else; paste its output into the "
                        f"page:\n{diff}")
