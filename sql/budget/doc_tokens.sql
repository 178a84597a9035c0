-- Every word piece of a corpus's documents, from the registered arrays of assay.store.tokens.write_tokens (one row a
-- piece, documents in doc_id order, pieces in text order); the constant columns are bound once, not sent per row.
INSERT INTO doc_tokens (tokenizer_id, corpus_hash, doc_id, tok_idx, start_char, end_char)
SELECT $tokenizer_id, $corpus_hash, doc_id, tok_idx, start_char, end_char
FROM _assay_tokens
