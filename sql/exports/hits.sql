-- Export `hits`: every stage's ranked hits of one run, with the chunk's span [start_char, end_char)
-- in its document's text. The LEFT JOIN keeps a hit even if its chunk row were missing (span NULL).
SELECT h.run_id, h.query_id, h.stage, h.rank, h.chunk_id, h.doc_id, h.score, c.start_char, c.end_char
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
LEFT JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
WHERE h.run_id = $run_id
ORDER BY h.query_id, h.stage, h.rank
