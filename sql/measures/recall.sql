-- measure: R
-- interval: bootstrap
-- cutoff: required
-- levels: chunk, doc
-- definition: share of gold units covered by the top k (set recall)
--
-- R@k: the share of gold units that some item in the top k covers (set recall).
SELECT q.query_id, u.level,
       COALESCE(SUM(j.new_units), 0) * 1.0 / u.n_units AS value
FROM eval_questions q
JOIN unit_counts u ON u.run_id = q.run_id AND u.query_id = q.query_id
LEFT JOIN judged_ranking j
  ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.level = u.level
 AND j.stage = $stage AND j.rank <= $k
WHERE q.run_id = $run_id AND q.answerable
GROUP BY q.query_id, u.level, u.n_units
