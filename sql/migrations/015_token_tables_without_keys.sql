-- The token tables without their primary-key indexes. Checking the key of doc_tokens (an ART index beside the
-- table, one entry per word piece: 1.7 million for SciFact's 5,183 abstracts) cost five times the insert itself
-- and took most of the warehouse's bytes. Each key stays unique as assay.store.tokens.write_tokens makes it: a
-- corpus's pieces and a chunk set's counts are written once, when none are stored yet, inside the writing
-- transaction that holds the warehouse's only read-write connection. Columns, types and row order are unchanged.

CREATE TABLE doc_tokens_015 (
    tokenizer_id  VARCHAR NOT NULL,
    corpus_hash   VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    tok_idx       INTEGER NOT NULL,      -- 0-based position in the document
    start_char    INTEGER NOT NULL,
    end_char      INTEGER NOT NULL
);
INSERT INTO doc_tokens_015
SELECT tokenizer_id, corpus_hash, doc_id, tok_idx, start_char, end_char FROM doc_tokens ORDER BY rowid;
DROP TABLE doc_tokens;
ALTER TABLE doc_tokens_015 RENAME TO doc_tokens;

CREATE TABLE chunk_tokens_015 (
    tokenizer_id  VARCHAR NOT NULL,
    chunk_set     VARCHAR NOT NULL,
    chunk_id      VARCHAR NOT NULL,
    first_tok     INTEGER NOT NULL,
    n_tokens      INTEGER NOT NULL
);
INSERT INTO chunk_tokens_015
SELECT tokenizer_id, chunk_set, chunk_id, first_tok, n_tokens FROM chunk_tokens ORDER BY rowid;
DROP TABLE chunk_tokens;
ALTER TABLE chunk_tokens_015 RENAME TO chunk_tokens;
