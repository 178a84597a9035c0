-- Export `questions`: every question of one run with its labels, its number of final results and its latency.
-- The eval_questions view's columns, read from the tables so a run of any status exports (that view holds
-- complete runs only).
SELECT r.run_id, q.query_id, q.query_text, q.category, q.form, q.hard_class, q.unanswerable,
       q.category <> 'no_answer' AS answerable, rq.n_results, rq.latency_ms
FROM runs r
JOIN run_queries rq ON rq.run_id = r.run_id
JOIN queries q ON q.judgments_hash = r.judgments_hash AND q.query_id = rq.query_id
WHERE r.run_id = $run_id
ORDER BY q.query_id
