-- nDCG@Ntok: DCG over the ranks within the budget, each gold unit credited once at the first rank whose
-- (cut) text overlaps it, with the highest grade among the units that rank newly covers (the chunk-level
-- credit rule); over the ideal DCG of every gold unit, so a budget too small to hold them cannot reach 1.
-- @include measures/span_context
, dcg AS (
    SELECT query_id, SUM(gain / (LN(first_rank + 1) / LN(2)) ORDER BY first_rank) AS dcg
    FROM (SELECT query_id, first_rank, MAX(grade) AS gain FROM first_hits GROUP BY query_id, first_rank) credits
    GROUP BY query_id
),
idcg AS (
    SELECT i.query_id, SUM(i.gain / (LN(i.ideal_rank + 1) / LN(2)) ORDER BY i.ideal_rank) AS idcg
    FROM ideal_gains i
    WHERE i.run_id = $run_id AND i.level = 'chunk'
    GROUP BY i.query_id
)
SELECT q.query_id, 'chunk' AS level, COALESCE(d.dcg, 0.0) / i.idcg AS value
FROM eval_questions q
JOIN idcg i ON i.query_id = q.query_id
LEFT JOIN dcg d ON d.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
