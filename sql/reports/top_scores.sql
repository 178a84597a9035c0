-- Each question's top final score (NULL when it returned nothing) and whether it is answerable.
SELECT q.query_id, q.answerable, h.score
FROM eval_questions q
LEFT JOIN hits h ON h.run_id = q.run_id AND h.query_id = q.query_id AND h.stage = 'final' AND h.rank = 1
WHERE q.run_id = $run_id
ORDER BY q.query_id
