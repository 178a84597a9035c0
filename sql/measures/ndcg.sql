-- measure: nDCG
-- interval: bootstrap
-- cutoff: optional
-- levels: chunk, doc
-- budget: measures/ndcg_budget
-- definition: DCG of the top k (gain / log2(rank + 1), linear grades) over the ideal DCG; @Ntok: the ranks
--   within a budget of N tokens, the last one credited only for the gold its cut text overlaps, over the
--   ideal DCG of every gold unit
--
-- nDCG@k: sum of gain / log2(rank + 1) over the top k, divided by the same sum for the
-- ideal ranking of the gold units (linear gains, as trec_eval's ndcg_cut). Sums run in rank order, so a
-- value never depends on the order rows reach them (the last bit of a float sum does).
WITH dcg AS (
    SELECT j.query_id, j.level, SUM(j.gain / (LN(j.rank + 1) / LN(2)) ORDER BY j.rank) AS dcg
    FROM judged_ranking j
    WHERE j.run_id = $run_id AND j.stage = $stage AND j.rank <= $k AND j.gain > 0
    GROUP BY j.query_id, j.level
),
idcg AS (
    SELECT i.query_id, i.level, SUM(i.gain / (LN(i.ideal_rank + 1) / LN(2)) ORDER BY i.ideal_rank) AS idcg
    FROM ideal_gains i
    WHERE i.run_id = $run_id AND i.ideal_rank <= $k
    GROUP BY i.query_id, i.level
)
SELECT q.query_id, i.level, COALESCE(d.dcg, 0.0) / i.idcg AS value
FROM eval_questions q
JOIN idcg i ON i.query_id = q.query_id
LEFT JOIN dcg d ON d.query_id = q.query_id AND d.level = i.level
WHERE q.run_id = $run_id AND q.answerable
