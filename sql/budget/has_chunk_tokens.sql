-- A row when the chunk set's token counts are stored (assay.store.tokens.write_tokens writes them all at once).
SELECT 1 FROM chunk_tokens WHERE tokenizer_id = $tokenizer_id AND chunk_set = $chunk_set LIMIT 1
