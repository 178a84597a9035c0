-- Keys for the chunks a run's hits (the registered _assay_hit_rows, each chunk by its position in the registered
-- _assay_hit_chunks) name that its chunk set has no key for: a span an external retriever returned, a document
-- id other than the chunk's.
INSERT INTO chunk_keys (chunk_key, chunk_set, chunk_id, doc_id)
SELECT CAST((SELECT COALESCE(MAX(chunk_key), -1) FROM chunk_keys)
            + ROW_NUMBER() OVER (ORDER BY n.chunk_id, n.doc_id) AS INTEGER),
       $chunk_set, n.chunk_id, n.doc_id
FROM (SELECT DISTINCT c.chunk_id, c.doc_id
      FROM _assay_hit_chunks c
      WHERE c.chunk IN (SELECT chunk FROM _assay_hit_rows)) n
WHERE NOT EXISTS (SELECT 1 FROM chunk_keys k
                  WHERE k.chunk_set = $chunk_set AND k.chunk_id = n.chunk_id AND k.doc_id = n.doc_id);
