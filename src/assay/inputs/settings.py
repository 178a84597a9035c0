"""Every setting a run takes, with its default, and the tables an assay.toml may hold: what assay.inputs.project
checks a file against and assay.retrieval.pipelines resolves a pipeline from. Names and defaults only, so the
file is read and checked below the layers that run a pipeline."""

# the reranker a pipeline with rerank = true uses unless it names one (assay.retrieval.models finds its files)
DEFAULT_RERANKER = "Xenova/ms-marco-MiniLM-L-6-v2"

# Settings every run has, with their defaults. None means "decided by the pipeline or the chunker".
RUN_DEFAULTS = {
    "chunker": "recursive", "chunk_size": None, "overlap": None, "depth": 100, "doc_depth": 10,
    "lowercase": True, "stopwords": True, "stemming": True, "seed": 0, "calibration": None,
}
PIPELINE_DEFAULTS = {
    "lexical": False, "dense": False, "fusion": None, "rrf_k": 60, "weights": None, "rerank": False,
    "reranker": DEFAULT_RERANKER, "reranker_path": None, "rerank_top_n": 50, "embedder": "auto", "final_k": None,
    # word pieces the embedder takes per text (None: the model's default, 256 for the offline MiniLM)
    "max_length": None,
    # a retriever outside assay: "command", "http", "plugin", "trec-run" or "python" (the Python API)
    "retriever": None, "command": None, "url": None, "plugin": None, "run_file": None, "timeout_s": 30.0,
    "api_key_env": None, "run_order": "score",
    # environment variables a command retriever gets besides assay.core.credentials.CHILD_ENV_ALLOWED
    "pass_env": [],
    # the answer stage
    "generator": None, "generator_model": None, "generator_base_url": None, "generator_api_key_env": "OPENAI_API_KEY",
    "generator_timeout_s": 60.0, "min_interval_s": 0.0, "context_k": 5, "max_quote": 240, "force_generation": False,
    "generator_backoff_s": [5.0, 10.0],  # waits before the two retries of a 429 or 503
    "max_retry_wait_s": 120.0,  # the most one request waits for its retries in all (backoff and Retry-After)
    "max_reply_chars": 65536,  # characters of each model reply and error stored (0: no reply text at all)
    "judge_base_url": None, "judge_model": None, "judge_api_key_env": "OPENAI_API_KEY", "judge_timeout_s": 60.0,
}
SETTINGS = tuple(RUN_DEFAULTS) + tuple(PIPELINE_DEFAULTS)
# [run] keys that say how to read the inputs, not how to retrieve: they never enter a run's settings or hash.
# max_expanded_mb and read_timeout_s bound one PDF or DOCX as it is read (assay.inputs.corpus.budget).
RUN_READING = {"max_file_mb": 50.0, "max_expanded_mb": 250.0, "read_timeout_s": 300.0}
# [sql]: the bounds of one `assay sql` (--timeout, --max-rows, --memory-mb); their ranges are in core/limits.py SQL.
SQL_DEFAULTS = {"timeout_s": 30.0, "max_rows": 10_000, "memory_mb": 2048}
# The tables an assay.toml may hold; `assay init` writes each (tests/inputs/test_scaffold.py keeps them in step).
TABLES = ("project", "run", "pipelines", "gate", "ablate", "sweep", "lake", "measures", "corpus", "warehouse", "sql")
