-- Success@Ntok: 1 when the text within the budget overlaps any gold span ("is the answer in the prompt?").
-- @include measures/span_context
SELECT q.query_id, 'chunk' AS level, CASE WHEN COALESCE(o.n, 0) > 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q
LEFT JOIN overlap o ON o.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
