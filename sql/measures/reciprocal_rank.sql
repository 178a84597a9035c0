-- measure: RR
-- interval: bootstrap
-- cutoff: optional
-- levels: chunk, doc
-- definition: 1 / rank of the first relevant item (within the top k), else 0
--
-- RR@k: 1 / rank of the first relevant item within the top k, else 0.
SELECT q.query_id, l.level,
       COALESCE(1.0 / MIN(j.rank), 0.0) AS value
FROM eval_questions q
CROSS JOIN levels l
LEFT JOIN judged_ranking j
  ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.level = l.level
 AND j.stage = $stage AND j.rank <= $k AND j.gain > 0
WHERE q.run_id = $run_id AND q.answerable
GROUP BY q.query_id, l.level
