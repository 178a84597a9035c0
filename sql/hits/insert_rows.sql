-- A run's stored lists (the registered _assay_hit_rows), each chunk (its position in the registered
-- _assay_hit_chunks) by its key, in list and rank order.
INSERT INTO hit_rows (list_key, rank, chunk_key, score)
SELECT h.list_key, h.rank, k.chunk_key, h.score
FROM _assay_hit_rows h
JOIN _assay_hit_chunks c ON c.chunk = h.chunk
JOIN chunk_keys k ON k.chunk_set = $chunk_set AND k.chunk_id = c.chunk_id AND k.doc_id = c.doc_id
ORDER BY h.list_key, h.rank;
