-- Export `questions`: every question of one run with its labels, its number of final results and its latency.
SELECT q.run_id, q.query_id, q.query_text, q.category, q.form, q.hard_class, q.unanswerable, q.answerable,
       q.n_results, q.latency_ms
FROM eval_questions q
WHERE q.run_id = $run_id
ORDER BY q.query_id
