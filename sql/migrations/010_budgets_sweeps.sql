-- Fair chunking comparisons: context budgets in tokens, sweeps, and calibrations that know what they fit.

-- The tokenizer that measures context budgets (assay ships one: src/assay/data/, see assay.store.tokens).
CREATE TABLE tokenizers (
    tokenizer_id  VARCHAR PRIMARY KEY,   -- SHA-256 of the tokenizer file
    name          VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL
);

-- Every token of every document: [start_char, end_char) into documents.text (no special tokens).
CREATE TABLE doc_tokens (
    tokenizer_id  VARCHAR NOT NULL,
    corpus_hash   VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    tok_idx       INTEGER NOT NULL,      -- 0-based position in the document
    start_char    INTEGER NOT NULL,
    end_char      INTEGER NOT NULL,
    PRIMARY KEY (tokenizer_id, corpus_hash, doc_id, tok_idx)
);

-- A chunk's tokens: the document tokens that overlap its span, from first_tok, n_tokens of them.
CREATE TABLE chunk_tokens (
    tokenizer_id  VARCHAR NOT NULL,
    chunk_set     VARCHAR NOT NULL,
    chunk_id      VARCHAR NOT NULL,
    first_tok     INTEGER NOT NULL,
    n_tokens      INTEGER NOT NULL,
    PRIMARY KEY (tokenizer_id, chunk_set, chunk_id)
);

ALTER TABLE runs ADD COLUMN tokenizer_id VARCHAR;   -- the tokenizer its budgeted measures count with
ALTER TABLE runs ADD COLUMN sweep_id VARCHAR;       -- set when the run is a point of `assay sweep`

-- A sweep: a grid of chunkers x sizes x overlaps x pipelines, one run per point.
CREATE TABLE sweeps (
    sweep_id      VARCHAR PRIMARY KEY,
    created_at    TIMESTAMP NOT NULL,
    spec          VARCHAR NOT NULL,      -- the grid and the measures, canonical JSON
    corpus_hash   VARCHAR NOT NULL,
    judgments_hash VARCHAR NOT NULL
);

CREATE TABLE sweep_points (
    sweep_id      VARCHAR NOT NULL,
    point         INTEGER NOT NULL,      -- 1-based, in grid order
    run_id        VARCHAR NOT NULL,
    chunker       VARCHAR NOT NULL,
    chunk_size    INTEGER,
    overlap       INTEGER,
    pipeline      VARCHAR NOT NULL,
    PRIMARY KEY (sweep_id, point)
);

-- What a calibration was fitted on: applying it to scores of another kind is refused.
ALTER TABLE calibrations ADD COLUMN pipeline VARCHAR;
ALTER TABLE calibrations ADD COLUMN stage VARCHAR;            -- the stage whose top score was fitted
ALTER TABLE calibrations ADD COLUMN score_identity VARCHAR;   -- canonical JSON: what produced the scores
ALTER TABLE calibrations ADD COLUMN judgments_hash VARCHAR;   -- the questions it was fitted on

-- Each hit with its chunk's span, its token count, and the tokens of the hits ranked above it.
-- Context budgets read this: a hit is in a budget of N tokens when tokens_before < N.
CREATE VIEW budget_hits AS
SELECT h.run_id, h.stage, h.query_id, h.rank, h.chunk_id, c.doc_id, c.start_char, c.end_char,
       r.tokenizer_id, r.corpus_hash, t.first_tok, t.n_tokens,
       COALESCE(SUM(CAST(t.n_tokens AS BIGINT)) OVER (
           PARTITION BY h.run_id, h.stage, h.query_id ORDER BY h.rank
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS tokens_before
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
JOIN chunk_tokens t ON t.tokenizer_id = r.tokenizer_id AND t.chunk_set = r.chunk_set AND t.chunk_id = h.chunk_id;
