-- measure: P
-- interval: bootstrap
-- cutoff: required
-- levels: chunk, doc
-- definition: credited items in the top k divided by k
--
-- P@k: credited items in the top k, divided by k (a short list is not rewarded).
SELECT q.query_id, l.level,
       COUNT(j.rank) * 1.0 / $k AS value
FROM eval_questions q
CROSS JOIN levels l
LEFT JOIN judged_ranking j
  ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.level = l.level
 AND j.stage = $stage AND j.rank <= $k AND j.gain > 0
WHERE q.run_id = $run_id AND q.answerable
GROUP BY q.query_id, l.level
