"""`assay judgments`: the golden-set tools (check, rebase, fmt, add with its prompts, draft)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.cli.base import (
    Number, cli, corpus_option, corpus_options, emit, max_file_option, say, setting, warehouse_option,
)
from assay.core.limits import DRAFTS, GRADE, SIMILARITY
from assay.inputs.judgments.vocabulary import CATEGORIES, FORMS, UNANSWERABLE


@cli.group()
def judgments():
    """Golden-set tools."""


@judgments.command("check")
@click.argument("judgments_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@corpus_option
@click.option("--strict", is_flag=True, help="Exit 1 when any lint fires, not only on errors.")
@click.option("--verbose", is_flag=True, help="List term competition for every question, and every corpus file "
                                                "not read.")
@click.option("--pipeline", default=None,
              help="The pipeline the set will evaluate: with a BM25 stage, every no_answer question that shares "
                   "a content word with the corpus is a lint (default: [project] pipeline in assay.toml, else "
                   "bm25).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Project configuration (default: the nearest assay.toml, here or above).")
@max_file_option
@click.option("--warehouse", "warehouse_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Warehouse whose runs say which corpus the file last ran against, for the note on a changed "
                   "corpus (default: the project's, as --warehouse elsewhere; only read).")
@corpus_options(own_verbose=True)
def judgments_check(judgments_path, corpus_dir, strict, verbose, pipeline, config_path, max_file_mb, warehouse_path):
    """Validate a judgments file against a corpus and report the lints that keep it honest.

    Default JUDGMENTS_PATH and --corpus: [project] judgments and corpus in assay.toml."""
    from assay.golden.lint import check
    from assay.inputs.corpus import file_limit
    from assay.inputs.project import load_config, project_input, project_pipeline
    from assay.retrieval.pipelines import max_file_mb as configured_limit
    from assay.store.warehouse import Warehouse, resolve_path

    judgments_path = project_input("judgments", judgments_path, "JUDGMENTS_PATH")
    corpus_dir, pipeline = project_input("corpus", corpus_dir), project_pipeline(pipeline)
    wh = Warehouse.brief(warehouse_path, old_schema="refuse") if resolve_path(warehouse_path).is_file() else None
    with file_limit(configured_limit(load_config(config_path), max_file_mb)):
        text, n_warnings = check(judgments_path, corpus_dir, verbose=verbose, pipeline=pipeline,
                                 config_path=config_path, warehouse=wh, say=say)
    click.echo(text, nl=False)
    if strict and n_warnings:
        sys.exit(1)


@judgments.command("rebase")
@click.argument("judgments_path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from", "old_ref", required=True, metavar="OLD",
              help="The corpus the file resolves against: a directory, @NAME, or a stored corpus's hash (8 or more "
                   "hex digits, as `assay runs` shows it).")
@click.option("--to", "new_ref", required=True, metavar="NEW", help="The changed corpus: a directory, @NAME or hash.")
@click.option("--threshold", type=Number(SIMILARITY), default=0.8, show_default=True,
              help="Least similarity (0..1) of the nearest passage for a quote that no longer resolves to be "
                   "proposed as its edit; below it the entry is gone.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the proposed judgments go (default: FILE.rebased.jsonl beside FILE; never FILE itself).")
@click.option("--force", is_flag=True, help="Replace --out when it exists.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the report, every entry, as JSON to this file.")
@click.option("--check", "check_only", is_flag=True, help="Report only: write no proposal (for CI).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@max_file_option
@warehouse_option
@corpus_options
def judgments_rebase(judgments_path, old_ref, new_ref, threshold, out_path, force, report_path, check_only, fmt,
                     max_file_mb, warehouse_path):
    """Carry a golden set to a changed corpus: classify every gold entry (unchanged, moved, edited, gone) and
    write a proposed judgments file for review; FILE itself is never written.

    Exit code 0 when the proposal equals FILE (every entry unchanged, or moved within its own document), 9 when
    an entry moved to another document, was edited or is gone (the proposal needs review), 3 when FILE does not
    resolve against OLD. Default FILE: [project] judgments in assay.toml."""
    from assay.core import jsonout
    from assay.golden import rebase as rb
    from assay.inputs.corpus import file_limit
    from assay.inputs.project import load_config, project_input
    from assay.retrieval.pipelines import max_file_mb as configured_limit
    from assay.store.warehouse import Warehouse

    judgments_path = project_input("judgments", judgments_path, "FILE")
    wh = Warehouse.brief(warehouse_path, old_schema="refuse")  # read only: an old warehouse is not upgraded
    with file_limit(configured_limit(load_config(None), max_file_mb)):
        old = rb.open_corpus(old_ref, lambda: wh, "--from")
        new = rb.open_corpus(new_ref, lambda: wh, "--to")
    result = rb.rebase(judgments_path, old, new, threshold)
    out = None if check_only else (out_path or rb.default_out(judgments_path))
    if out is not None:
        size = rb.write_proposal(result, out, force)
    report = result.report(out)
    if report_path is not None:
        emit(jsonout.dumps(report, indent=2, ensure_ascii=False) + "\n", report_path)
    if fmt == "json":
        click.echo(jsonout.dumps(report, indent=2, ensure_ascii=False))
    else:
        click.echo(rb.render(result), nl=False)
    if out is not None:
        total = len(result.judgments.judgments)
        left_out = {d["query_id"] for d in result.dropped}
        reviewed = len({o.query_id for o in result.outcomes if o.changes_entry} - left_out)
        say(f"wrote {out} ({size} bytes): {total - len(left_out)} of {total} questions, {reviewed} marked with "
            "a review field" + (f"; review it, then replace {judgments_path} with it" if result.needs_review
                                else ""))
    if result.needs_review:
        sys.exit(9)


def _stdin_is_terminal() -> bool:
    """Whether assay may ask for what a command's options left out (a seam tests replace)."""
    return sys.stdin.isatty()


def _corpus(corpus_dir, max_file_mb, config_path=None):
    from assay.inputs.corpus import file_limit, load_corpus
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import max_file_mb as configured_limit

    with file_limit(configured_limit(load_config(config_path), max_file_mb)):
        return load_corpus(corpus_dir)


def _unreviewed(judgments) -> None:
    drafts = [j.query_id for j in judgments.judgments if j.review is not None]
    if drafts:
        named = ", ".join(drafts[:3]) + (f", +{len(drafts) - 3} more" if len(drafts) > 3 else "")
        say(f"warning: {len(drafts)} question{'s are' if len(drafts) != 1 else ' is an'} unreviewed "
            f"draft{'s' * (len(drafts) != 1)} ({named}): check each question, its quote and form, then "
            "delete its review field")


@judgments.command("fmt")
@click.argument("judgments_paths", metavar="[FILE]...", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--check", is_flag=True,
              help="Change nothing: print the diff fmt would apply and exit 9 when a file is not formatted "
                   "(for CI and pre-commit).")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also resolve every quote against this corpus; nothing is written unless all resolve.")
@max_file_option
@corpus_options
def judgments_fmt(judgments_paths, check, corpus_dir, max_file_mb):
    """Sort judgments files by query_id and lay out every line one way, after checking each parses.

    With several files, each is done on its own; the exit code is 3 when any does not parse or resolve,
    else 9 when --check found any not formatted. Without FILE: [project] judgments in assay.toml."""
    from assay.core.errors import JudgmentsError, NotFormatted
    from assay.core.escape import terminal_lines
    from assay.inputs.judgments.fmt import fmt

    if not judgments_paths:
        from assay.inputs.project import project_input

        judgments_paths = (project_input("judgments", None, "FILE"),)
    corpus = _corpus(corpus_dir, max_file_mb) if corpus_dir is not None else None
    broken, unformatted = [], []
    for path in judgments_paths:
        try:
            formatted, spans = fmt(path, check=check, corpus=corpus)
        except NotFormatted as exc:
            click.echo(exc.diff, nl=False)
            unformatted.append(exc)
            continue
        except JudgmentsError as exc:
            if len(judgments_paths) == 1:
                raise
            click.echo(terminal_lines(f"error: {exc}"), err=True)
            broken.append(exc)
            continue
        n = len(formatted.judgments.judgments)
        resolved = "" if corpus is None else (
            f"; {len(spans)} gold {'entry resolves' if len(spans) == 1 else 'entries resolve'} exactly once against "
            f"{len(corpus.documents)} documents (corpus {corpus.corpus_hash[:12]})")
        if formatted.changed:
            say(f"formatted {path}: {formatted.summary()}; {n} questions{resolved}")
        else:
            say(f"{path}: {'formatted' if check else 'already formatted'}, {n} questions{resolved}")
        _unreviewed(formatted.judgments)
    if broken:
        for exc in unformatted:
            click.echo(terminal_lines(f"error: {exc}"), err=True)
        sys.exit(broken[0].exit_code)
    if len(unformatted) == 1:
        raise unformatted[0]
    if unformatted:
        names = " ".join(str(exc.path) for exc in unformatted)
        raise NotFormatted(f"{len(unformatted)} files are not formatted; run: assay judgments fmt {names}")


@judgments.command("add")
@click.argument("judgments_path", metavar="[FILE]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The corpus the quote must occur in, exactly once (default: [project] corpus in assay.toml).")
@click.option("--id", "query_id", default=None,
              help="The question's query_id; an existing one gets another gold entry.")
@click.option("--question", default=None, help="The question as a user types it (a new question only).")
@click.option("--doc", default=None, help="The gold document, relative to the corpus directory.")
@click.option("--quote", default=None, help="Text of the document that answers the question (it must occur once).")
@click.option("--grade", type=Number(GRADE), default=None, help="Relevance grade of the entry (default 1).")
@click.option("--category", type=click.Choice(CATEGORIES), default=None,
              help="normal (default), ambiguous, adversarial or no_answer; on an existing question it replaces the "
                   "category.")
@click.option("--form", type=click.Choice(FORMS), default=None, help="match or gap (a new question needs one).")
@click.option("--hard-class", default=None, help="Free text, e.g. near-duplicate (default normal).")
@click.option("--unanswerable", type=click.Choice(UNANSWERABLE), default=None,
              help="For a no_answer question (and implies it): near_miss, out_of_corpus or under_specified.")
@click.option("--notes", default=None, help="Free text kept with the question.")
@max_file_option
@corpus_options
def judgments_add(judgments_path, corpus_dir, max_file_mb, **given):
    """Add a question, or another gold entry of one, checked and resolved now, in query_id order.

    What the options leave out is asked for when standard input is a terminal; otherwise it is a
    usage error (exit 2). Default FILE and --corpus: [project] judgments and corpus in assay.toml."""
    from assay.inputs.judgments.add import OPTION, Addition, GoldenFile, add, missing
    from assay.inputs.project import project_input

    judgments_path = project_input("judgments", judgments_path, "FILE")
    corpus_dir = project_input("corpus", corpus_dir)
    golden = GoldenFile.read(judgments_path)
    corpus = _corpus(corpus_dir, max_file_mb)
    addition = Addition(**given)
    interactive = _stdin_is_terminal()
    while True:
        need = missing(golden, addition)
        if not need:
            break
        if not interactive:
            raise click.UsageError(f"missing {', '.join(OPTION[f] for f in need)} (standard input is not a terminal, "
                                   "so assay cannot ask for it)")
        _ask(need[0], addition, corpus)
        if need[0] == "query_id" and addition.query_id not in golden.objects and addition.category is None \
                and addition.unanswerable is None:
            addition.category = click.prompt("category", type=click.Choice(CATEGORIES), default="normal")
    done = add(golden, corpus, addition)
    where = f"{judgments_path}:{done.line}"
    verb = "created it with" if done.created_file else "added"
    found = (f": its quote occurs once in {done.doc} (characters {done.start}-{done.end})"
             if done.doc is not None else "")
    if done.new_question:
        say(f"{verb} question {done.query_id} at {where}{found}")
    else:
        say(f"added a gold entry to question {done.query_id} at {where} (now {done.gold_entries}){found}")


class _QueryId(click.ParamType):
    name = "query id"

    def convert(self, value, param, ctx):
        from assay.inputs.judgments.parse import valid_query_id

        if not valid_query_id(value):
            self.fail(f"{value!r}: a query id starts with a letter or digit and holds only letters, digits and "
                      ". _ : / -", param, ctx)
        return value


class _CorpusDoc(click.ParamType):
    name = "doc"

    def __init__(self, corpus):
        self.docs = corpus.by_id()

    def convert(self, value, param, ctx):
        if value not in self.docs:
            self.fail(f"{value!r} is not in the corpus (write its path relative to the corpus directory)", param, ctx)
        return value


class _Quote(click.ParamType):
    """A quote that occurs exactly once in one document: asked again, with the nearest passage, until it does."""

    name = "quote"

    def __init__(self, text: str, doc_id: str):
        self.text, self.doc_id = text, doc_id  # the doc id says whether Markdown/RST markup is skipped

    def convert(self, value, param, ctx):
        from assay.inputs.judgments.nearest import nearest_passage
        from assay.inputs.judgments.resolve import find_quote

        found = find_quote(self.text, value, self.doc_id)
        if len(found) > 1:
            self.fail(f"it occurs {len(found)} times; lengthen it until it is unique", param, ctx)
        if not found:
            near = nearest_passage(self.text, value, self.doc_id)
            self.fail("not found in the document" + (f"; nearest ({near.describe()}): {near.snippet!r}"
                                                      if near else ""), param, ctx)
        return value


def _ask(field: str, addition, corpus) -> None:
    labels = {"query_id": "query id", "question": "question", "form": "form",
              "doc": "gold document (path in the corpus)",
              "quote": "quote"}
    kind = {"query_id": _QueryId(), "form": click.Choice(FORMS), "doc": _CorpusDoc(corpus)}.get(field)
    if field == "quote" and addition.doc in corpus.by_id():
        kind = _Quote(corpus.by_id()[addition.doc].text, addition.doc)
    setattr(addition, field, click.prompt(labels[field], type=kind))


@judgments.command("draft")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The corpus passages are sampled from (default: [project] corpus in assay.toml).")
@click.option("--generator", type=click.Choice(["openai"]), required=True,
              help="Who drafts: openai (any OpenAI-compatible chat-completions endpoint).")
@click.option("--model", required=True, help="The model's name at the endpoint.")
@click.option("--base-url", default="https://api.openai.com/v1", show_default=True,
              help="Base URL of the chat-completions endpoint (…/v1).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the API key; '' for an endpoint that takes none.")
@click.option("-n", "--count", type=Number(DRAFTS), default=10, show_default=True,
              help="Passages to ask about, one request each; a dropped draft is not replaced.")
@click.option("--seed", type=setting("seed"), default=0, show_default=True, help="Seed of the passage sample.")
@click.option("--id-prefix", default="draft-", show_default=True, help="The drafts' query ids: PREFIX001, ...")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The judgments file to write the kept drafts to.")
@click.option("--force", is_flag=True, help="Overwrite --out when it exists.")
@click.option("--timeout", "timeout_s", type=setting("generator_timeout_s"), default=60.0, show_default=True,
              help="Seconds per request.")
@click.option("--min-interval", "min_interval_s", type=setting("min_interval_s"), default=0.0, show_default=True,
              help="Minimum seconds between request starts.")
@click.option("--max-retry-wait", "max_retry_wait_s", type=setting("max_retry_wait_s"), default=120.0,
              show_default=True, help="Most seconds one request waits for its 429/503 retries in all, backoff and "
                                      "Retry-After together; a longer wait drops that passage.")
@max_file_option
@corpus_options
def judgments_draft(corpus_dir, generator, model, base_url, api_key_env, count, seed, id_prefix, out_path, force,
                    timeout_s, min_interval_s, max_retry_wait_s, max_file_mb):
    """Draft questions with quotes from sampled passages through a chat model; keep those whose quote occurs
    exactly once, each marked for review."""
    from collections import Counter

    from assay.golden.draft import REASONS, draft, write
    from assay.inputs.judgments.parse import valid_query_id
    from assay.retrieval.answer.client import ChatClient

    if out_path.exists() and not force:
        raise click.UsageError(f"{out_path} exists; pass --force to overwrite it")
    from assay.inputs.project import project_input

    corpus_dir = project_input("corpus", corpus_dir)
    if not valid_query_id(id_prefix):
        raise click.BadParameter("must start with a letter or digit and hold only letters, digits and . _ : / -",
                                 param_hint="'--id-prefix'")
    corpus = _corpus(corpus_dir, max_file_mb)
    client = ChatClient(base_url, model, api_key_env=api_key_env or None, timeout_s=timeout_s,
                        min_interval_s=min_interval_s, max_retry_wait_s=max_retry_wait_s)
    drafts = draft(corpus, client, count, seed=seed, id_prefix=id_prefix)
    for qid, doc, reason, detail in drafts.dropped_lines:
        say(f"  dropped {qid} ({doc}): {reason}: {detail}")
    asked = drafts.asked
    forms = lambda items: ", ".join(f"{f} {n}" for f, n in sorted(Counter(items).items()))  # noqa: E731
    dropped = ", ".join(f"{r} {drafts.dropped[r]}" for r in REASONS if drafts.dropped[r])
    say(f"asked about {len(asked)} passages of {len({s.doc_id for s in asked})} documents "
        f"({forms(s.form for s in asked)}): kept {len(drafts.records)}"
        + (f" ({forms(r['form'] for r in drafts.records)})" if drafts.records else "")
        + (f", dropped {sum(drafts.dropped.values())} ({dropped})" if dropped else ", dropped none")
        + f"; {drafts.stats['requests']} requests, {drafts.stats['retries']} retries")
    if drafts.stopped:
        say(f"warning: stopped early: {drafts.stopped}")
    write(out_path, drafts)
    say(f"wrote {len(drafts.records)} drafts to {out_path}, each with a review field: check each question, "
        f"its quote and form, delete the field, then merge them (cat, then assay judgments fmt)")
