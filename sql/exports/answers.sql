-- Export `answers`: the answer stage's outcome for each question of one run it asked (no rows for a run without
-- an answer stage): answered, refused (and why) or failed (where, the HTTP status, the error). drops and
-- parse_errors are JSON text; response_excerpt holds at most 200 characters of the reply.
SELECT a.run_id, a.query_id, a.generator, a.mode, a.status, a.refusal, a.failure_stage, a.claims_returned,
       a.claims_kept, a.drops, a.repair_turns, a.http_status, a.finish_reason, a.parse_errors, a.error,
       a.response_excerpt, a.latency_ms
FROM answers a
WHERE a.run_id = $run_id
ORDER BY a.query_id
