"""Commands that bring collections into the warehouse: `ingest` (a corpus directory) and `assay import`
(BEIR and TREC test collections, as @NAME corpora and judgment sets)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.base import cli, corpus_options, max_file_option, say, warehouse_option


@cli.command()
@click.argument("corpus_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@max_file_option
@warehouse_option
@corpus_options
def ingest(corpus_dir, max_file_mb, warehouse_path):
    """Read every corpus file under CORPUS_DIR into the warehouse: Markdown (.md, .markdown), text (.txt),
    reStructuredText (.rst), HTML (.html, .htm), PDF (.pdf) and Word (.docx); files without an extension
    with --extensionless.

    Every other file is listed as not read, counted by extension (--verbose names each with its reason).
    A file that is not UTF-8 is read with --encoding or a detected encoding, said on stderr; an empty file
    is kept, with a warning. Only regular files inside CORPUS_DIR are read: a link pointing outside it, a
    FIFO or a device is refused, naming it (exit code 1). Default CORPUS_DIR: [project] corpus in assay.toml."""
    from assay.inputs.corpus import load_corpus
    from assay.inputs.project import load_config, project_input
    from assay.retrieval.pipelines import max_file_mb as file_limit
    from assay.store.warehouse import Warehouse

    corpus_dir = project_input("corpus", corpus_dir, "CORPUS_DIR")
    corpus = load_corpus(corpus_dir, file_limit(load_config(None), max_file_mb))
    with Warehouse.open(warehouse_path) as wh:
        with wh.transaction():
            written = wh.write_corpus(corpus)
    state = "ingested" if written else "already in the warehouse:"
    click.echo(f"{state} {len(corpus.documents)} documents, corpus {corpus.corpus_hash}")


@cli.group("import")
def import_group():
    """Import standard test collections (BEIR, TREC) into the warehouse, streamed."""


def _imported(summary: dict) -> None:
    from assay.store.imports import report_lines

    for line in report_lines(summary):
        say(line)
    click.echo(f"imported corpus {summary['corpus']} ({summary['documents']} documents, corpus "
               f"{summary['corpus_hash'][:12]}) and judgments {summary['judgments']} ({summary['queries']} "
               f"questions, {summary['gold_entries']} relevant documents; {summary['judged_non_relevant']} "
               f"judged non-relevant left out)")
    click.echo(f"run it with: assay run --corpus {summary['corpus']} --judgments {summary['judgments']} "
               "--chunker document")


@import_group.command("beir")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/<split>.tsv to import.")
@click.option("--name", default=None, help="Name to refer to it as @NAME (default: the directory name).")
@warehouse_option
def import_beir_cmd(directory, split, name, warehouse_path):
    """A BEIR dataset (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) as corpus @NAME and judgments @NAME/SPLIT."""
    from assay.store.imports import import_beir
    from assay.store.warehouse import Warehouse

    with Warehouse.open(warehouse_path) as wh:
        _imported(import_beir(wh, directory, split, name))


@import_group.command("trec")
@click.option("--docs", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC SGML documents (<DOC><DOCNO>...).")
@click.option("--topics", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC topics (<top><num><title>...).")
@click.option("--qrels", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TREC qrels (qid iter docno rel).")
@click.option("--name", required=True, help="Name to refer to it as @NAME.")
@click.option("--topic-fields", default="title", show_default=True,
              help="Topic fields that make the question, comma-separated (title, desc, narr).")
@warehouse_option
def import_trec_cmd(docs, topics, qrels, name, topic_fields, warehouse_path):
    """A TREC collection (documents, topics, qrels) as corpus and judgments @NAME."""
    from assay.store.imports import import_trec
    from assay.store.warehouse import Warehouse

    fields = tuple(f.strip() for f in topic_fields.split(",") if f.strip())
    with Warehouse.open(warehouse_path) as wh:
        _imported(import_trec(wh, docs, topics, qrels, name, fields))
