-- Dense retrieval, stage-by-stage records, stage attribution, calibrations.

-- What a run's pipeline consisted of, in order (bm25, dense, fusion, rerank, final).
CREATE TABLE run_stages (
    run_id        VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    position      INTEGER NOT NULL,
    PRIMARY KEY (run_id, stage)
);

-- Wall time of each stage per question (ms).
CREATE TABLE stage_latency (
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    latency_ms    DOUBLE  NOT NULL,
    PRIMARY KEY (run_id, query_id, stage)
);

-- Run-level figures that are not metrics: embeddings computed/reused, calibration applied (JSON).
ALTER TABLE runs ADD COLUMN stats VARCHAR;

-- An embedding's identity: vectors of different identities never mix.
CREATE TABLE embedding_identities (
    identity_hash  VARCHAR PRIMARY KEY,  -- SHA-256 of the canonical JSON of the fields below
    model          VARCHAR NOT NULL,
    onnx_sha256    VARCHAR NOT NULL,
    dim            INTEGER NOT NULL,
    normalized     BOOLEAN NOT NULL,
    query_prefix   VARCHAR NOT NULL,
    passage_prefix VARCHAR NOT NULL,
    created_at     TIMESTAMP NOT NULL
);

-- The vector cache: one vector per identity and chunk text (little-endian float32 bytes).
CREATE TABLE embeddings (
    identity_hash  VARCHAR NOT NULL,
    text_sha256    VARCHAR NOT NULL,
    vector         BLOB    NOT NULL,
    PRIMARY KEY (identity_hash, text_sha256)
);

-- Platt-scaling calibrations fitted on a run's top final scores.
CREATE TABLE calibrations (
    calibration_id VARCHAR PRIMARY KEY,
    run_id         VARCHAR NOT NULL,     -- the run whose scores it was fitted on
    created_at     TIMESTAMP NOT NULL,
    method         VARCHAR NOT NULL,     -- 'platt'
    a              DOUBLE  NOT NULL,
    b              DOUBLE  NOT NULL,
    threshold      DOUBLE  NOT NULL,     -- abstain when the calibrated probability is below it
    fit_set_hash   VARCHAR NOT NULL,
    config_hash    VARCHAR NOT NULL,     -- of the run it was fitted on
    result         VARCHAR NOT NULL,     -- full figures: in-sample and held-out (JSON)
    caveat         VARCHAR NOT NULL
);

-- For each stage of a run and each answerable question: does the stage's list overlap any gold span?
CREATE VIEW stage_presence AS
SELECT s.run_id, s.stage, s.position, q.query_id, q.n_results,
       CASE WHEN EXISTS (
           SELECT 1 FROM chunk_gold_overlaps o
           WHERE o.run_id = s.run_id AND o.stage = s.stage AND o.query_id = q.query_id
       ) THEN 1 ELSE 0 END AS present
FROM run_stages s
JOIN eval_questions q ON q.run_id = s.run_id AND q.answerable;

-- Where each answerable question was lost: the earliest stage after which no gold unit remained.
--   retrieval: in neither first-stage list;  fusion: in a first-stage list, cut by fusion;
--   rerank: cut by the reranker;  abstained: the pipeline returned nothing (calibrated abstention);
--   cutoff: cut by the final depth;  found: in the final list.
-- Stages a pipeline does not have are NULL.
CREATE VIEW stage_attribution AS
SELECT run_id, query_id,
       MAX(CASE WHEN stage = 'bm25' THEN present END) AS in_bm25,
       MAX(CASE WHEN stage = 'dense' THEN present END) AS in_dense,
       MAX(CASE WHEN stage = 'fusion' THEN present END) AS in_fusion,
       MAX(CASE WHEN stage = 'rerank' THEN present END) AS in_rerank,
       MAX(CASE WHEN stage = 'final' THEN present END) AS in_final,
       CASE
           WHEN MAX(CASE WHEN stage = 'final' THEN present END) = 1 THEN 'found'
           WHEN COALESCE(MAX(CASE WHEN stage IN ('bm25', 'dense') THEN present END), 0) = 0 THEN 'retrieval'
           WHEN MAX(CASE WHEN stage = 'fusion' THEN present END) = 0 THEN 'fusion'
           WHEN MAX(CASE WHEN stage = 'rerank' THEN present END) = 0 THEN 'rerank'
           WHEN MAX(n_results) = 0 THEN 'abstained'
           ELSE 'cutoff'
       END AS lost_at
FROM stage_presence
GROUP BY run_id, query_id;

-- Per run: how many answerable questions were lost where, and what fusion did.
CREATE VIEW loss_funnel AS
SELECT run_id, lost_at, COUNT(*) AS n
FROM stage_attribution
GROUP BY run_id, lost_at;

CREATE VIEW fusion_effect AS
SELECT run_id,
       SUM(CASE WHEN in_fusion = 1 AND (in_bm25 = 0 OR in_dense = 0) THEN 1 ELSE 0 END) AS rescued,
       SUM(CASE WHEN in_fusion = 0 AND (in_bm25 = 1 OR in_dense = 1) THEN 1 ELSE 0 END) AS lost
FROM stage_attribution
WHERE in_fusion IS NOT NULL
GROUP BY run_id;
