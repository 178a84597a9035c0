-- measure: AP
-- interval: bootstrap
-- cutoff: optional
-- levels: chunk, doc
-- definition: mean over gold units of the precision at the rank each is credited; 0 for units not found
--
-- AP (AP@k with a cutoff): mean over gold units of the precision at each credited rank;
-- units never retrieved contribute 0. The sum runs in rank order (see ndcg.sql).
WITH ranked AS (
    SELECT j.query_id, j.level, j.rank, j.gain,
           SUM(CASE WHEN j.gain > 0 THEN 1 ELSE 0 END) OVER (
               PARTITION BY j.query_id, j.level ORDER BY j.rank
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
           ) AS credited_so_far
    FROM judged_ranking j
    WHERE j.run_id = $run_id AND j.stage = $stage AND j.rank <= $k
)
SELECT q.query_id, u.level,
       COALESCE(SUM(CASE WHEN r.gain > 0 THEN r.credited_so_far * 1.0 / r.rank END ORDER BY r.rank), 0.0) / u.n_units AS value
FROM eval_questions q
JOIN unit_counts u ON u.run_id = q.run_id AND u.query_id = q.query_id
LEFT JOIN ranked r ON r.query_id = q.query_id AND r.level = u.level
WHERE q.run_id = $run_id AND q.answerable
GROUP BY q.query_id, u.level, u.n_units
