-- Document-level TREC qrels for one run's judgments: one row per gold document, graded by its best entry
-- (the gold_units view at level 'doc', the units the metrics score against).
SELECT u.query_id, u.unit AS doc_id, u.grade
FROM gold_units u
WHERE u.run_id = $run_id AND u.level = 'doc'
ORDER BY u.query_id, u.unit
