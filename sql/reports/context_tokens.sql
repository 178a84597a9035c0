-- Mean tokens the top $k final results of a run occupy, over its answerable questions (none returned: 0).
SELECT AVG(CAST(COALESCE(t.tokens, 0) AS DOUBLE)) AS mean_tokens
FROM eval_questions q
LEFT JOIN (
    SELECT query_id, SUM(n_tokens) AS tokens
    FROM budget_hits
    WHERE run_id = $run_id AND stage = 'final' AND rank <= $k
    GROUP BY query_id
) t ON t.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
