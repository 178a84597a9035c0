-- A row when the corpus's word pieces are stored (assay.store.tokens.write_tokens writes them all at once).
SELECT 1 FROM doc_tokens WHERE tokenizer_id = $tokenizer_id AND corpus_hash = $corpus_hash LIMIT 1
