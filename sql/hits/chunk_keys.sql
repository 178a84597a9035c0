-- A new chunk set's chunks (the registered _assay_chunk_keys, by ordinal) under consecutive new keys.
INSERT INTO chunk_keys (chunk_key, chunk_set, chunk_id, doc_id)
SELECT CAST((SELECT COALESCE(MAX(chunk_key), -1) FROM chunk_keys) + ROW_NUMBER() OVER (ORDER BY ordinal) AS INTEGER),
       $chunk_set, chunk_id, doc_id
FROM _assay_chunk_keys;
