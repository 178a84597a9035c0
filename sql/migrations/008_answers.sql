-- The answer stage: answers, claims, citations, raw model responses and the model client's requests.

ALTER TABLE runs ADD COLUMN gate_eligible BOOLEAN DEFAULT TRUE;  -- false for --force-generation runs

CREATE TABLE answers (
    run_id           VARCHAR NOT NULL,
    query_id         VARCHAR NOT NULL,
    generator        VARCHAR NOT NULL,   -- extractive | openai
    mode             VARCHAR,            -- extractive | tool | json | json-fallback
    status           VARCHAR NOT NULL,   -- answered | refused | failed
    refusal          VARCHAR,            -- no_results | calibration | insufficient_evidence | no_valid_claim | schema | error
    failure_stage    VARCHAR,            -- generation | schema | validation (when the answer failed)
    claims_returned  INTEGER NOT NULL,
    claims_kept      INTEGER NOT NULL,
    drops            VARCHAR,            -- JSON: dropped claims by reason
    repair_turns     INTEGER NOT NULL,
    http_status      INTEGER,
    finish_reason    VARCHAR,
    parse_errors     VARCHAR,            -- JSON list
    error            VARCHAR,
    response_excerpt VARCHAR,            -- at most 200 characters
    latency_ms       DOUBLE NOT NULL,
    PRIMARY KEY (run_id, query_id)
);

-- Every raw model response (or the extractive generator's payload), so answers can be validated
-- again after a validator or label change without calling the model.
CREATE TABLE answer_raw (
    run_id    VARCHAR NOT NULL,
    query_id  VARCHAR NOT NULL,
    attempt   INTEGER NOT NULL,
    mode      VARCHAR NOT NULL,
    raw       VARCHAR NOT NULL,
    PRIMARY KEY (run_id, query_id, attempt)
);

-- The chunks each question's generator saw, in order.
CREATE TABLE answer_context (
    run_id    VARCHAR NOT NULL,
    query_id  VARCHAR NOT NULL,
    position  INTEGER NOT NULL,
    chunk_id  VARCHAR NOT NULL,
    PRIMARY KEY (run_id, query_id, position)
);

CREATE TABLE claims (
    run_id     VARCHAR NOT NULL,
    query_id   VARCHAR NOT NULL,
    claim_idx  INTEGER NOT NULL,
    text       VARCHAR NOT NULL,
    kept       BOOLEAN NOT NULL,
    reason     VARCHAR,                  -- why it was dropped: uncited | unknown_citation | quote_mismatch | bad_quote
    PRIMARY KEY (run_id, query_id, claim_idx)
);

CREATE TABLE citations (
    run_id     VARCHAR NOT NULL,
    query_id   VARCHAR NOT NULL,
    claim_idx  INTEGER NOT NULL,
    cite_idx   INTEGER NOT NULL,
    chunk_id   VARCHAR NOT NULL,
    quote      VARCHAR NOT NULL,
    valid      BOOLEAN NOT NULL,
    reason     VARCHAR,
    doc_id     VARCHAR,                  -- for valid citations: where the quote lies in its document
    start_char INTEGER,
    end_char   INTEGER,
    PRIMARY KEY (run_id, query_id, claim_idx, cite_idx)
);

-- Every HTTP attempt the model client made (never a key, never a request body).
CREATE TABLE model_requests (
    run_id       VARCHAR NOT NULL,
    seq          INTEGER NOT NULL,
    query_id     VARCHAR,
    started_at   VARCHAR,
    latency_ms   DOUBLE,
    status       INTEGER,
    error        VARCHAR,
    rate_limited BOOLEAN,
    retry        INTEGER,
    waited_s     DOUBLE,
    PRIMARY KEY (run_id, seq)
);

-- Where each answerable question was lost, now through the answer stage:
-- the retrieval stages as in stage_attribution, then generation | schema | validation, else answered.
CREATE VIEW answer_attribution AS
SELECT s.run_id, s.query_id,
       CASE
           WHEN s.lost_at <> 'found' THEN s.lost_at
           WHEN a.claims_kept > 0 THEN 'answered'
           WHEN a.failure_stage IS NOT NULL THEN a.failure_stage
           ELSE 'generation'
       END AS lost_at
FROM stage_attribution s
JOIN answers a ON a.run_id = s.run_id AND a.query_id = s.query_id;
