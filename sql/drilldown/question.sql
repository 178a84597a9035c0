-- Question $query_id (NULL: every question) of run $run_id: the run's pipeline, the question's labels and
-- notes, and where it was lost (NULL without gold; answer_lost_at NULL without an answer stage).
SELECT r.pipeline, q.query_id, q.query_text, q.category, q.form, q.hard_class, q.unanswerable, jq.notes,
       q.answerable, q.n_results, q.latency_ms, a.lost_at, aa.lost_at AS answer_lost_at
FROM eval_questions q
JOIN complete_runs r ON r.run_id = q.run_id
JOIN queries jq ON jq.judgments_hash = r.judgments_hash AND jq.query_id = q.query_id
LEFT JOIN stage_attribution a ON a.run_id = q.run_id AND a.query_id = q.query_id
LEFT JOIN answer_attribution aa ON aa.run_id = q.run_id AND aa.query_id = q.query_id
WHERE q.run_id = $run_id AND ($query_id IS NULL OR q.query_id = $query_id)
ORDER BY q.query_id
