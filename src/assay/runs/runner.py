"""A run: resolve every judgment, chunk, index, ask every question stage by stage; a sink records it.

Stages (one object each, in assay.retrieval.stages): `bm25`, `dense` and/or `external` (first-stage
candidate lists, `depth` chunks each, deepened until `doc_depth` distinct documents exist),
`fusion` (when two run), `rerank` (the cross-encoder over the top `rerank_top_n`), `final` (what
the pipeline returns: the last list cut at `final_k`, emptied when a calibration says abstain),
and the answer stage when there is a generator. Every stage's list is stored. ``execute_run``
builds the ``RunRecord``; a sink (assay.runs.sinks: a warehouse, or a lake partition) writes it.

A run ends ``complete``, ``blocked`` or ``failed``, and is stored either way:

- ``blocked``: the model endpoint answered HTTP 429 three times in a row (the client raised
  ``RunBlocked``); the run stops at that question.
- ``failed``: the answer stage could not run: at least one question was sent to the generator,
  and every question sent failed at generation (answer status ``failed``, refusal ``error``: no
  key, an unreachable or timing-out endpoint, an HTTP error after the retries, a reply that is not
  JSON). Questions refused before generation (no results, calibration) are not sent and count
  neither way.
- ``complete``: everything else, including a run where only some questions failed: those are
  recorded per question and count against its answer measures.

Only complete runs have metrics; `assay run`, `gate` and `regress` exit 8 on the others
(``RunFailed``), and `assay answers show RUN_ID` shows what each question got.
"""

from __future__ import annotations

import platform
import secrets
import subprocess
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata

from assay import __version__
from assay.core.errors import ConfigError, RunFailed, UsageError
from assay.core.hashing import canonical_json, config_hash, sha256_text
from assay.retrieval import TIE_BREAK

BOOTSTRAP_SAMPLES = 1000
_VERSIONED = ("duckdb", "tantivy", "pyarrow", "ibis-framework", "sqlglot", "numpy", "click", "fastembed",
              "onnxruntime")


@dataclass
class RunOptions:
    """Settings given by the caller; None leaves a setting to the pipeline, assay.toml or the default."""

    pipeline: str = "bm25"
    config_path: object = None
    chunker: str | None = None
    chunk_size: int | None = None
    overlap: int | None = None
    depth: int | None = None
    doc_depth: int | None = None
    lowercase: bool | None = None
    stopwords: bool | None = None
    stemming: bool | None = None
    seed: int | None = None
    embedder: str | None = None
    max_length: int | None = None
    fusion: str | None = None
    rrf_k: int | None = None
    rerank_top_n: int | None = None
    reranker: str | None = None
    reranker_path: str | None = None
    final_k: int | None = None
    calibration: str | None = None
    command: str | None = None
    url: str | None = None
    run_file: str | None = None
    run_order: str | None = None
    timeout_s: float | None = None
    api_key_env: str | None = None
    generator: str | None = None
    generator_model: str | None = None
    generator_base_url: str | None = None
    generator_api_key_env: str | None = None
    generator_timeout_s: float | None = None
    min_interval_s: float | None = None
    context_k: int | None = None
    max_quote: int | None = None
    force_generation: bool | None = None
    generator_backoff_s: list | None = None
    max_retry_wait_s: float | None = None
    max_reply_chars: int | None = None
    pass_env: list | None = None
    judge_base_url: str | None = None
    judge_model: str | None = None
    judge_api_key_env: str | None = None
    judge_timeout_s: float | None = None
    max_file_mb: float | None = None  # how the corpus is read, not a retrieval setting: never stored or hashed
    python_retriever: object = None  # the Python API's callable (not a setting: it is not serializable)
    name: str | None = None  # the name the run is stored under (assay.evaluate's name=); None: the pipeline's

    def overrides(self) -> dict:
        skip = ("pipeline", "config_path", "python_retriever", "max_file_mb", "name")
        out = {k: (str(v) if k == "run_file" and v is not None else v)
               for k, v in self.__dict__.items() if k not in skip}
        out["pass_env"] = list(self.pass_env) if self.pass_env else None  # click gives () when the flag is absent
        return out


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
    stages: list = field(default_factory=lambda: ["bm25", "final"])
    stage_latency: list = field(default_factory=list)  # (query_id, stage, latency_ms)
    stats: dict = field(default_factory=dict)
    status: str = "complete"  # or 'blocked' or 'failed': see the module docstring
    gate_eligible: bool = True  # false for --force-generation runs
    answers: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    citations: list = field(default_factory=list)
    answer_raw: list = field(default_factory=list)
    answer_context: list = field(default_factory=list)
    model_requests: list = field(default_factory=list)
    claim_judgments: list = field(default_factory=list)
    sweep_id: str | None = None  # set by `assay sweep` for each point it runs


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


def load_calibration(warehouse, calibration_id: str) -> dict:
    """A stored calibration with what it was fitted on (see assay.runs.abstention.check_applies).

    A calibration stored before calibrations recorded their score identity gets it from the
    run it was fitted on; when that run is gone too, it is refused.
    """
    import json

    from assay.runs.abstention import score_identity

    rows = warehouse.con.execute(
        "SELECT c.calibration_id, c.run_id, c.a, c.b, c.threshold, c.config_hash, c.pipeline, c.stage, "
        "c.score_identity, c.judgments_hash, r.pipeline, r.config, r.judgments_hash "
        "FROM calibrations c LEFT JOIN runs r ON r.run_id = c.run_id WHERE c.calibration_id = ?",
        [calibration_id]).fetchall()
    if not rows:
        raise ConfigError(f"no calibration {calibration_id!r} in {warehouse.path}; `assay calibrate RUN` fits one")
    (cid, run_id, a, b, threshold, chash, pipeline, stage, identity, jhash,
     run_pipeline, run_config, run_jhash) = rows[0]
    if identity is None and run_config is None:
        raise ConfigError(f"calibration {cid} does not record what its scores were (it predates score identities) "
                          f"and run {run_id}, which it was fitted on, is no longer in {warehouse.path}; "
                          "fit it again: `assay calibrate RUN_ID` on a run of this pipeline")
    return {"calibration_id": cid, "fitted_on_run": run_id, "a": a, "b": b, "threshold": threshold,
            "fitted_config_hash": chash, "pipeline": pipeline or run_pipeline, "stage": stage or "final",
            "score_identity": json.loads(identity) if identity else score_identity(json.loads(run_config)),
            "judgments_hash": jhash or run_jhash}


@dataclass
class Question:
    query_id: str
    query: str


def execute_run(corpus_dir, judgments_path, options: RunOptions, progress=None, warehouse=None) -> RunRecord:
    """Everything up to the write. Judgments resolve before any chunking, indexing or embedding.

    ``warehouse`` (or a callable returning it: a sink's ``reads``) serves the embedding cache, stored
    calibrations and @name collections.
    """
    from assay.inputs.chunking import chunker_label, make_chunker
    from assay.inputs.corpus import load_corpus
    from assay.inputs.judgments import load_judgments, resolve_gold
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import Pipeline, max_file_mb, resolve_pipeline

    say = progress or (lambda msg: None)
    get_wh = warehouse if callable(warehouse) else (lambda: warehouse)
    project = load_config(options.config_path)
    pipeline = resolve_pipeline(options.pipeline, project, options.overrides())
    if options.name is not None:  # the settings stay those of options.pipeline; the run carries the caller's name
        pipeline = Pipeline(options.name, pipeline.settings)
    s = pipeline.settings
    require_extras(pipeline)
    try:
        chunker = make_chunker(s["chunker"], s["chunk_size"], s["overlap"])
    except ConfigError as exc:
        if options.overlap is None and options.chunk_size is None:
            raise
        # given on the command line (or to the Python API) as the other options are: a usage error, before any work
        raise UsageError(f"--overlap and --chunk-size: {exc}; give a smaller --overlap or a larger --chunk-size") \
            from None
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    from assay.store.drift import warn_of_drift
    from assay.store.collections import is_ref, stored_corpus, stored_judgments

    wh = get_wh()
    # A stored corpus and what else is read before chunking come through one open of the warehouse (a brief
    # warehouse opens its file for each statement otherwise). A corpus read from files is read outside it, so
    # the file is not held while they are parsed; the reads then open it as before.
    reads = wh is not None and is_ref(corpus_dir)
    with wh.reading() if reads else nullcontext(wh) as reader:
        judgments = (stored_judgments(reader, judgments_path) if is_ref(judgments_path)
                     else load_judgments(judgments_path))
        corpus = (stored_corpus(reader, corpus_dir) if is_ref(corpus_dir)
                  else load_corpus(corpus_dir, max_file_mb(project, options.max_file_mb)))
        warn_of_drift(reader, judgments, corpus, say)  # before resolving: most useful when a quote no longer does
        calibration = load_calibration(reader, s["calibration"]) if s["calibration"] else None
    gold = resolve_gold(judgments, corpus)
    say(f"resolved {len(gold)} gold entries for {len(judgments.judgments)} questions "
        f"against {len(corpus.documents)} documents")

    chunks = _chunk(chunker, corpus.documents)
    chunk_set = sha256_text(corpus.corpus_hash + canonical_json(chunker.config()))
    n_chunked = len(chunks)
    say(f"{len(chunks)} chunks, {chunker_label(chunker.config())}; pipeline {pipeline.name}: "
        f"{' -> '.join(pipeline.stages)}")
    stats: dict = {}
    opened: list = []  # built stages that hold resources (an index, a process), closed whatever happens
    try:
        texts = _ChunkTexts(corpus, chunks)
        stages = _build_stages(s, pipeline, chunks, corpus, texts, calibration, options, get_wh, say, stats, opened)
        retrieval = {st.name: st.config() for st in stages if st.name not in ("final", "answer")}
        answer = next((st for st in stages if st.name == "answer"), None)
        config = {
            "pipeline": pipeline.name, "stages": pipeline.stages, "settings": shown_settings(s),
            "chunker": chunker.config(),
            "retrieval": retrieval, "depth": s["depth"], "doc_depth": s["doc_depth"],
            "final_k": s["final_k"] or s["depth"], "seed": s["seed"], "bootstrap_samples": BOOTSTRAP_SAMPLES,
            "tie_break": TIE_BREAK, "calibration": calibration,
        }
        if calibration is not None:
            from assay.runs.abstention import check_applies

            check_applies(calibration, config)
        if answer is not None:
            retrieval["generator"] = answer.config()
            say(f"answers by the {answer.generator.name} generator")
        status, reason, rows = _ask(judgments, pipeline, stages, answer, say)
        dense = next((st for st in stages if st.name == "dense"), None)
        if dense is not None:
            record = stats["truncation"]["dense"]
            record["queries"] = dense.index.embedder.truncation([j.query for j in judgments.judgments],
                                                                query=True).as_dict()
            from assay.retrieval.embedding.truncation import warning

            if (line := warning(dense.index.embedder.model_name, record)) is not None:
                say(line)
    finally:
        for stage in opened:
            stage.close()
    query_rows, hit_rows, latency_rows = rows
    chunks = chunks + _external_chunks(corpus, chunks, hit_rows)
    if len(chunks) != n_chunked:  # spans an external retriever returned become chunks of this run's chunk set
        chunk_set = sha256_text(chunk_set + canonical_json(sorted(c.chunk_id for c in chunks[n_chunked:])))
    if calibration is not None:
        # the list the calibration judged is the last stage before final, cut: non-empty iff that stage is
        before = {q for q, stage, hits in hit_rows.lists() if stage == pipeline.stages[-2] and len(hits)}
        empty = {q for q, _, n in query_rows if n == 0}
        stats["calibration"] = {"calibration_id": calibration["calibration_id"],
                                "fitted_on_run": calibration["fitted_on_run"],
                                "in_sample": calibration["judgments_hash"] == judgments.sha256,
                                "abstained": len(empty & before), "no_results": len(empty - before)}
    finished = datetime.now(timezone.utc).replace(tzinfo=None)
    answers = answer.rows if answer is not None else {}
    if answer is not None:
        stats["answers"] = answer.stats()
        if status == "complete":
            status, reason = answer_outcome(answers["answers"])
        if status != "complete":
            stats["outcome"] = {"status": status, "reason": reason}
            if status == "failed":
                say(f"warning: the answer stage could not run: {reason}; the run is marked failed")
    return RunRecord(
        run_id=new_run_id(started), started_at=started, finished_at=finished, config=config,
        config_hash=config_hash(config), corpus=corpus, chunk_set=chunk_set, chunks=chunks,
        judgments=judgments, gold=gold, query_rows=query_rows, hits=hit_rows,
        versions=dependency_versions(), git_commit=git_commit(), stages=pipeline.stages,
        stage_latency=latency_rows, stats=stats, status=status,
        gate_eligible=not (answer is not None and s["force_generation"]), **answers,
    )


URL_SETTINGS = ("url", "generator_base_url", "judge_base_url")


def shown_settings(s: dict) -> dict:
    """The settings as a run stores them: a URL's credentials (userinfo, query values) as ``***``
    (assay.core.credentials.redact_url), so runs.config, reports and exports never hold them."""
    from assay.core.credentials import redact_url

    return {**s, **{k: redact_url(s[k]) for k in URL_SETTINGS if k in s}}


def require_extras(pipeline) -> None:
    """Stop before reading the corpus when a stage needs an extra that is not installed (assay.core.extras)."""
    from assay.core.extras import require

    s = pipeline.settings
    if s["dense"]:
        require("dense", f"pipeline {pipeline.name!r} (its dense stage)")
    if s["rerank"]:
        require("dense", f"pipeline {pipeline.name!r} (its cross-encoder reranker)")


def _chunk(chunker, documents) -> list:
    from assay.core import progress

    chunks = []
    with progress.task("chunking documents", total=len(documents), unit="docs") as shown:
        for d in documents:
            chunks += chunker.chunk(d.doc_id, d.text)
            shown.advance()
    return chunks


def _build_stages(s, pipeline, chunks, corpus, texts, calibration, options, get_wh, say, stats, opened) -> list:
    """The pipeline's stage objects in order: first stages, fusion, rerank, final, answer. Stages holding
    resources are appended to ``opened`` as they are built, so the caller closes them if a later one fails."""
    from assay.retrieval.stages import Answer, Cut, Fuse, Rerank, Retrieve, generator_for, judge_for

    stages = []
    if s["lexical"]:
        from assay.retrieval.bm25 import AnalyzerOptions, BM25Index

        stages.append(Retrieve("bm25", BM25Index(chunks, AnalyzerOptions(s["lowercase"], s["stopwords"], s["stemming"])),
                               s["depth"], s["doc_depth"]))
        opened.append(stages[-1])
    if s["dense"]:
        from assay.store.vectors import embed_chunks
        from assay.retrieval.embedding.embedder import Embedder
        from assay.retrieval.dense import DenseIndex

        embedder = Embedder(s["embedder"], max_length=s["max_length"])
        say(f"embedding model {embedder.model_name} ({embedder.model_dir}), max_length "
            f"{embedder.identity.max_tokens} word pieces")
        vectors, computed, reused = embed_chunks(get_wh(), embedder, chunks, say)
        stats["embeddings"] = {"computed": computed, "reused": reused}
        # every chunk of the run counts, cached or not: its vector was made from what was not cut
        stats["truncation"] = {"dense": {"max_length": embedder.identity.max_tokens,
                                         "model_limit": embedder.model_limit, "unit": "word pieces",
                                         "chunks": embedder.truncation([c.text for c in chunks]).as_dict()}}
        stages.append(Retrieve("dense", DenseIndex(chunks, vectors, embedder), s["depth"], s["doc_depth"]))
    if s["retriever"]:
        stages.append(Retrieve("external", _external(s, corpus, options.python_retriever), s["depth"], None))
        opened.append(stages[-1])
    firsts = [st.name for st in stages]
    if len(firsts) == 2:
        # the order the lists were computed in before stages were objects: external, bm25, dense
        stages.append(Fuse(sorted(firsts, key=("external", "bm25", "dense").index), s))
    if s["rerank"]:
        from assay.retrieval.rerank.cross_encoder import CrossEncoderReranker

        stages.append(Rerank(stages[-1].name, CrossEncoderReranker(s["reranker"], s["reranker_path"]), texts,
                             s["rerank_top_n"]))
    stages.append(Cut(stages[-1].name, s["final_k"], calibration))
    generator, client = generator_for(s)
    if generator is not None:
        stages.append(Answer(generator, client, judge_for(s), s, texts, calibration))
    return stages


def _ask(judgments, pipeline, stages, answer, say):
    """Every question through every stage, timed: (status, reason, (query rows, hit rows, latency rows))."""
    from assay.core import progress
    from assay.store.hits import RunHits

    lists_of = [st for st in stages if st.name != "answer"]
    # work done once for all questions (the dense stage embeds them in one batch), charged in equal shares
    prep = {st.name: st.prepare([j.query for j in judgments.judgments]) for st in lists_of if hasattr(st, "prepare")}
    prep_ms = sum(prep.values())
    query_rows, hit_rows, latency_rows = [], RunHits(), []
    status, reason = "complete", None
    with progress.task("asking questions", total=len(judgments.judgments), unit="questions") as shown:
        for j in judgments.judgments:
            question = Question(j.query_id, j.query)
            t0 = time.perf_counter()
            lists, timing = {}, {}
            for stage in lists_of:
                t = time.perf_counter()
                lists[stage.name] = stage.run(question, lists)
                timing[stage.name] = (time.perf_counter() - t) * 1000.0 + prep.get(stage.name, 0.0)
            timing["final"] = 0.0  # the cut is not a stage's work: its latency stays 0
            latency_ms = (time.perf_counter() - t0) * 1000.0 + prep_ms
            query_rows.append((j.query_id, latency_ms, len(lists["final"])))
            for stage in pipeline.stages:
                latency_rows.append((j.query_id, stage, timing[stage]))
                hit_rows.add(j.query_id, stage, lists[stage])  # kept as the stage made it: columns stay columns
            if answer is not None and not answer.run(question, lists):
                status = "blocked"
                reason = (f"the model endpoint answered HTTP 429 three times in a row at question {j.query_id} "
                          f"(after {len(answer.rows['answers'])} of {len(judgments.judgments)} questions): the run "
                          "stopped")
                say(f"warning: {reason}; it is marked blocked")
                break
            shown.advance()
    return status, reason, (query_rows, hit_rows, latency_rows)


PRE_GENERATION = ("no_results", "calibration")  # refusals decided before the generator is asked


def answer_outcome(answers: list) -> tuple[str, str | None]:
    """('failed', why) when every question sent to the generator failed at generation, else ('complete', None)."""
    from collections import Counter

    from assay.retrieval.answer.stage import ANSWER_COLUMNS

    rows = [dict(zip(ANSWER_COLUMNS, a)) for a in answers]
    sent = [r for r in rows if not (r["status"] == "refused" and r["refusal"] in PRE_GENERATION)]
    if not sent or any(r["status"] != "failed" for r in sent):
        return "complete", None
    errors = Counter(r["error"] or (f"HTTP {r['http_status']}" if r["http_status"] else "no reply") for r in sent)
    error, n = errors.most_common(1)[0]
    error = " ".join(str(error).split())[:300]
    also = f" ({n} of them; other errors on the rest)" if len(errors) > 1 else ""
    return "failed", (f"every one of the {len(sent)} question(s) sent to the model failed at generation: "
                      f"{error}{also}")


def check_outcome(record: RunRecord) -> None:
    """Raises RunFailed (exit code 8) for a stored run that did not complete; nothing for a complete one."""
    if record.status == "complete":
        return
    reason = record.stats.get("outcome", {}).get("reason") or "its answer stage could not run"
    raise RunFailed(f"run {record.run_id} has status {record.status}: {reason}. It is stored for inspection "
                    f"(`assay answers show {record.run_id}`) but has no metrics; exit code 8",
                    run_id=record.run_id, status=record.status, reason=reason)


class _ChunkTexts(dict):
    """Chunk id -> text, for our chunks and for any '<doc>#<start>-<end>' span of the corpus."""

    def __init__(self, corpus, chunks):
        super().__init__((c.chunk_id, c.text) for c in chunks)
        self._docs = corpus.by_id()

    def __contains__(self, chunk_id) -> bool:
        return dict.__contains__(self, chunk_id) or chunk_id.rsplit("#", 1)[0] in self._docs

    def __missing__(self, chunk_id: str) -> str:
        doc, span = chunk_id.rsplit("#", 1)
        start, end = (int(x) for x in span.split("-"))
        return self._docs[doc].text[start:end]


def _external(s: dict, corpus, python_retriever):
    import shlex

    from assay.retrieval import external as ext

    docs = {d.doc_id: len(d.text) for d in corpus.documents}
    kind = s["retriever"]
    if kind == "python":
        if python_retriever is None:
            raise ConfigError("the python retriever is only available through assay.evaluate(retriever=...)")
        return ext.CallableRetriever(python_retriever, docs)
    if kind == "command":
        argv = shlex.split(s["command"]) if isinstance(s["command"], str) else list(s["command"])
        return ext.CommandRetriever(argv, docs, timeout_s=s["timeout_s"],
                                    secret_env=[s["api_key_env"], s["generator_api_key_env"], s["judge_api_key_env"]],
                                    pass_env=s["pass_env"])
    if kind == "http":
        return ext.HttpRetriever(s["url"], docs, timeout_s=s["timeout_s"], api_key_env=s["api_key_env"])
    if kind == "trec-run":
        return ext.TrecRunRetriever(s["run_file"], docs, order=s["run_order"])
    return ext.plugin_retriever(s["plugin"], docs)


def _external_chunks(corpus, chunks, hit_rows) -> list:
    """Chunks for hits whose span no chunker produced (external retrievers return their own spans)."""
    from assay.inputs.chunking import Chunk
    from assay.retrieval.ranking import Ranking

    # an index's ranking names only chunks it indexed, this run's; other lists may name any span
    others = [hits for _, _, hits in hit_rows.lists() if not isinstance(hits, Ranking)]
    if not others:
        return []
    known = {c.chunk_id for c in chunks}
    texts = corpus.by_id()
    extra = {}
    for chunk_id, doc_id, _ in (h for hits in others for h in hits):
        if chunk_id not in known and chunk_id not in extra:
            start, end = (int(x) for x in chunk_id.rsplit("#", 1)[1].split("-"))
            extra[chunk_id] = Chunk(doc_id, -1, start, end, texts[doc_id].text[start:end])
    return [extra[k] for k in sorted(extra)]


def run(warehouse, corpus_dir, judgments_path, options: RunOptions, progress=None) -> RunRecord:
    from assay.runs.sinks import store_run

    warehouse.check_writable()  # before any work, not at the write: assay.store.warehouse.check_writable
    record = execute_run(corpus_dir, judgments_path, options, progress, warehouse=warehouse)
    store_run(warehouse, record)
    return record
