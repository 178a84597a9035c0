-- The first (query, document) pair listed twice in the run among the candidate hashes $hashes
-- (run_duplicate_candidates.sql), if any: trec_eval refuses a run with one.
SELECT query_id, docno
FROM trec_run
WHERE h IN (SELECT unnest($hashes))
GROUP BY query_id, docno
HAVING COUNT(*) > 1
ORDER BY query_id, docno
LIMIT 1
