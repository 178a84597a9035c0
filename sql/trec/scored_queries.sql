-- Every query scored, by query id (the order of the codes, query_codes.sql), with its number of
-- relevant documents (0: trec_eval scores it 0 on every measure).
SELECT c.query_id, COALESCE(u.n_units, 0) AS n_relevant
FROM eval_questions q
JOIN trec_query_codes c ON c.qcode = q.query_id
LEFT JOIN unit_counts u ON u.run_id = q.run_id AND u.query_id = q.query_id
ORDER BY c.qcode
