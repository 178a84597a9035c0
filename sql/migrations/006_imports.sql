-- Imported collections (BEIR, TREC): named corpora and judgment sets, titles kept apart,
-- and every judgment set's gold entries stored independently of any corpus.
ALTER TABLE corpora ADD COLUMN name VARCHAR;             -- '@name' refers to it in `assay run`
ALTER TABLE documents ADD COLUMN title VARCHAR;          -- imported documents: the title, apart from the body
ALTER TABLE judgment_sets ADD COLUMN name VARCHAR;

CREATE TABLE judgment_gold (
    judgments_hash VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    gold_idx       INTEGER NOT NULL,
    doc_id         VARCHAR NOT NULL,
    quote          VARCHAR,              -- NULL: the whole document
    grade          INTEGER NOT NULL,
    PRIMARY KEY (judgments_hash, query_id, gold_idx)
);
