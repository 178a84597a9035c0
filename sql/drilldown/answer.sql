-- The answer of one question of run $run_id (no row when the run has no answer stage).
SELECT status, refusal, failure_stage, generator, mode, response_excerpt, drops, claims_returned, claims_kept,
       error, latency_ms
FROM answers
WHERE run_id = $run_id AND query_id = $query_id
