-- The warehouse: corpora, chunks, judgments and every run's ranked lists, stage by stage.
-- Portable SQL: plain tables, no engine-specific types. JSON is stored as VARCHAR.

CREATE TABLE corpora (
    corpus_hash   VARCHAR PRIMARY KEY,   -- SHA-256 over sorted (path, raw bytes); see docs/architecture.md
    root          VARCHAR NOT NULL,      -- the directory it was read from, as given
    n_documents   INTEGER NOT NULL,
    total_bytes   BIGINT  NOT NULL,
    ingested_at   TIMESTAMP NOT NULL
);

CREATE TABLE documents (
    corpus_hash   VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,      -- corpus-relative path, forward slashes
    text          VARCHAR NOT NULL,      -- the text quotes resolve against (HTML reduced to text)
    byte_size     BIGINT  NOT NULL,      -- of the raw file
    sha256        VARCHAR NOT NULL,      -- of the raw file
    PRIMARY KEY (corpus_hash, doc_id)
);

CREATE TABLE chunk_sets (
    chunk_set     VARCHAR PRIMARY KEY,   -- SHA-256 of corpus hash + chunker configuration
    corpus_hash   VARCHAR NOT NULL,
    chunker       VARCHAR NOT NULL,      -- chunker configuration, canonical JSON
    n_chunks      INTEGER NOT NULL,
    created_at    TIMESTAMP NOT NULL
);

CREATE TABLE chunks (
    chunk_set     VARCHAR NOT NULL,
    chunk_id      VARCHAR NOT NULL,      -- '<doc_id>#<start>-<end>'
    doc_id        VARCHAR NOT NULL,
    ordinal       INTEGER NOT NULL,      -- position within its document
    start_char    INTEGER NOT NULL,      -- [start_char, end_char) into documents.text
    end_char      INTEGER NOT NULL,
    text          VARCHAR NOT NULL,
    text_sha256   VARCHAR NOT NULL,
    PRIMARY KEY (chunk_set, chunk_id)
);

CREATE TABLE judgment_sets (
    judgments_hash VARCHAR PRIMARY KEY,  -- SHA-256 of the JSONL file's raw bytes
    source_path    VARCHAR NOT NULL,
    n_queries      INTEGER NOT NULL,
    loaded_at      TIMESTAMP NOT NULL
);

CREATE TABLE queries (
    judgments_hash VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    query_text     VARCHAR NOT NULL,
    category       VARCHAR NOT NULL,     -- normal | ambiguous | adversarial | no_answer
    form           VARCHAR NOT NULL,     -- match | gap
    hard_class     VARCHAR NOT NULL,
    unanswerable   VARCHAR,              -- near_miss | out_of_corpus | under_specified (no_answer only)
    notes          VARCHAR,
    line           INTEGER NOT NULL,     -- line in the judgments file
    PRIMARY KEY (judgments_hash, query_id)
);

CREATE TABLE gold_spans (
    judgments_hash VARCHAR NOT NULL,
    corpus_hash    VARCHAR NOT NULL,     -- spans are resolved against one corpus
    query_id       VARCHAR NOT NULL,
    gold_idx       INTEGER NOT NULL,     -- position in the judgment's gold list: the chunk-level unit
    doc_id         VARCHAR NOT NULL,
    quote          VARCHAR,              -- NULL: the whole document is relevant
    grade          INTEGER NOT NULL,
    start_char     INTEGER NOT NULL,
    end_char       INTEGER NOT NULL,
    PRIMARY KEY (judgments_hash, corpus_hash, query_id, gold_idx)
);

CREATE TABLE runs (
    run_id         VARCHAR PRIMARY KEY,
    started_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP NOT NULL,
    status         VARCHAR NOT NULL,     -- 'complete': only complete runs are ever written
    pipeline       VARCHAR NOT NULL,
    config         VARCHAR NOT NULL,     -- the full resolved configuration, canonical JSON
    config_hash    VARCHAR NOT NULL,
    corpus_hash    VARCHAR NOT NULL,
    judgments_hash VARCHAR NOT NULL,
    chunk_set      VARCHAR NOT NULL,
    assay_version  VARCHAR NOT NULL,
    versions       VARCHAR NOT NULL,     -- dependency versions, canonical JSON
    git_commit     VARCHAR,
    seed           INTEGER NOT NULL,     -- seeds every bootstrap and sample over this run
    tie_break      VARCHAR NOT NULL      -- how equal scores are ordered
);

CREATE TABLE run_queries (
    run_id         VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    latency_ms     DOUBLE  NOT NULL,     -- wall time of the whole pipeline for this question
    n_results      INTEGER NOT NULL,     -- hits in the final stage; 0 is abstention
    PRIMARY KEY (run_id, query_id)
);

CREATE TABLE hits (
    run_id         VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    stage          VARCHAR NOT NULL,     -- bm25 | dense | fusion | rerank | final
    rank           INTEGER NOT NULL,     -- 1-based
    chunk_id       VARCHAR NOT NULL,
    doc_id         VARCHAR NOT NULL,
    score          DOUBLE,
    PRIMARY KEY (run_id, query_id, stage, rank)
);
