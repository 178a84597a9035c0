-- Answers by status and refusal reason.
SELECT status, COALESCE(refusal, '') AS refusal, COUNT(*) AS n FROM answers WHERE run_id = $run_id
GROUP BY status, refusal ORDER BY status, refusal
