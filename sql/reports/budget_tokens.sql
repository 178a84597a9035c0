-- The tokens each answerable question's $stage list holds over the run's whole depth (none returned: 0): all
-- that any context budget can be filled from. A question whose list holds fewer tokens than a budget never
-- reaches it (assay.measures.fill).
SELECT q.query_id, COALESCE(t.tokens, 0) AS tokens
FROM eval_questions q
LEFT JOIN (
    SELECT query_id, SUM(CAST(n_tokens AS BIGINT)) AS tokens
    FROM budget_hits
    WHERE run_id = $run_id AND stage = $stage
    GROUP BY query_id
) t ON t.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
ORDER BY q.query_id
