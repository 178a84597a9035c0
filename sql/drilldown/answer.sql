-- The answer of question $query_id (NULL: every question) of run $run_id (no row without an answer stage).
SELECT query_id, status, refusal, failure_stage, generator, mode, response_excerpt, drops, claims_returned,
       claims_kept, error, latency_ms
FROM answers
WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
ORDER BY query_id
