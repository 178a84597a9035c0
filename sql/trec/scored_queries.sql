-- Every query scored, with its number of relevant documents (0: trec_eval scores it 0 on every measure).
SELECT q.query_id, COALESCE(u.n_units, 0) AS n_relevant
FROM eval_questions q
LEFT JOIN unit_counts u ON u.run_id = q.run_id AND u.query_id = q.query_id
ORDER BY q.query_id
