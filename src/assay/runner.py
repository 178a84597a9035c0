"""A run: resolve every judgment, chunk, index, ask every question, record it all in one transaction."""

from __future__ import annotations

import platform
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata

from assay import __version__
from assay.errors import ConfigError
from assay.hashing import canonical_json, config_hash, sha256_text
from assay.retrieval import TIE_BREAK

PIPELINES = ("bm25",)
DEFAULT_DEPTH = 100
DEFAULT_DOC_DEPTH = 10
DEFAULT_SEED = 0
BOOTSTRAP_SAMPLES = 1000
_VERSIONED = ("duckdb", "tantivy", "pyarrow", "ibis-framework", "sqlglot", "numpy", "click")


@dataclass
class RunOptions:
    pipeline: str = "bm25"
    chunker: str = "recursive"
    chunk_size: int | None = None
    overlap: int | None = None
    depth: int = DEFAULT_DEPTH
    doc_depth: int = DEFAULT_DOC_DEPTH
    lowercase: bool = True
    stopwords: bool = True
    stemming: bool = True
    seed: int = DEFAULT_SEED


@dataclass
class RunRecord:
    run_id: str
    started_at: datetime
    finished_at: datetime
    config: dict
    config_hash: str
    corpus: object
    chunk_set: str
    chunks: list
    judgments: object
    gold: list
    query_rows: list = field(default_factory=list)  # (query_id, latency_ms, n_results)
    hits: list = field(default_factory=list)  # (query_id, stage, rank, chunk_id, doc_id, score)
    versions: dict = field(default_factory=dict)
    git_commit: str | None = None


def new_run_id(now: datetime) -> str:
    return f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def dependency_versions() -> dict:
    versions = {"assay": __version__, "python": platform.python_version()}
    for name in _VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """The commit of the git checkout assay runs in (the user's project), when there is one."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def build_config(options: RunOptions, chunker_config: dict, retriever_config: dict) -> dict:
    return {
        "pipeline": options.pipeline,
        "chunker": chunker_config,
        "retrieval": retriever_config,
        "depth": options.depth,
        "doc_depth": options.doc_depth,
        "seed": options.seed,
        "bootstrap_samples": BOOTSTRAP_SAMPLES,
        "tie_break": TIE_BREAK,
    }


def _validate(options: RunOptions) -> None:
    if options.pipeline not in PIPELINES:
        raise ConfigError(f"unknown pipeline {options.pipeline!r}; available: {', '.join(PIPELINES)}")
    if options.depth < 1:
        raise ConfigError(f"--depth must be at least 1, got {options.depth}")
    if options.doc_depth < 1:
        raise ConfigError(f"--doc-depth must be at least 1, got {options.doc_depth}")


def _search_to_doc_depth(index, query: str, depth: int, doc_depth: int):
    """Top ``depth`` chunks, deepened until ``doc_depth`` distinct documents exist (or the matches run out)."""
    limit = depth
    while True:
        hits = index.search(query, limit)
        if len({h.doc_id for h in hits}) >= doc_depth or len(hits) < limit:
            return hits
        limit *= 2


def execute_run(corpus_dir, judgments_path, options: RunOptions, progress=None) -> RunRecord:
    """Everything up to the write. Judgments resolve before any chunking or indexing starts."""
    from assay.chunking import chunker_label, make_chunker
    from assay.corpus import load_corpus
    from assay.judgments import load_judgments, resolve_gold
    from assay.retrieval.bm25 import AnalyzerOptions, BM25Index

    say = progress or (lambda msg: None)
    _validate(options)
    chunker = make_chunker(options.chunker, options.chunk_size, options.overlap)
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    judgments = load_judgments(judgments_path)
    corpus = load_corpus(corpus_dir)
    gold = resolve_gold(judgments, corpus)
    say(f"resolved {len(gold)} gold entries for {len(judgments.judgments)} questions "
        f"against {len(corpus.documents)} documents")

    chunks = [c for d in corpus.documents for c in chunker.chunk(d.doc_id, d.text)]
    chunk_set = sha256_text(corpus.corpus_hash + canonical_json(chunker.config()))
    analyzer = AnalyzerOptions(options.lowercase, options.stopwords, options.stemming)
    query_rows, hit_rows = [], []
    with BM25Index(chunks, analyzer) as index:
        config = build_config(options, chunker.config(), {"bm25": index.config()})
        say(f"indexed {len(chunks)} chunks, {chunker_label(chunker.config())}")
        for j in judgments.judgments:
            t0 = time.perf_counter()
            hits = _search_to_doc_depth(index, j.query, options.depth, options.doc_depth)
            latency_ms = (time.perf_counter() - t0) * 1000.0
            query_rows.append((j.query_id, latency_ms, len(hits)))
            for stage in ("bm25", "final"):
                hit_rows.extend(
                    (j.query_id, stage, rank, h.chunk_id, h.doc_id, h.score) for rank, h in enumerate(hits, 1)
                )
    finished = datetime.now(timezone.utc).replace(tzinfo=None)
    return RunRecord(
        run_id=new_run_id(started), started_at=started, finished_at=finished, config=config,
        config_hash=config_hash(config), corpus=corpus, chunk_set=chunk_set, chunks=chunks,
        judgments=judgments, gold=gold, query_rows=query_rows, hits=hit_rows,
        versions=dependency_versions(), git_commit=git_commit(),
    )


def run(warehouse, corpus_dir, judgments_path, options: RunOptions, progress=None) -> RunRecord:
    record = execute_run(corpus_dir, judgments_path, options, progress)
    warehouse.write_run(record)
    return record
