-- measure: Success
-- interval: wilson
-- cutoff: required
-- levels: chunk, doc
-- budget: measures/success_budget
-- definition: 1 if any relevant item is in the top k, else 0 (the hit rate; many RAG teams call it recall@k);
--   @Ntok: 1 if the text within a budget of N tokens overlaps a gold span
--
-- Success@k: 1 if any relevant item is ranked in the top k, else 0 (the "hit rate").
SELECT q.query_id, l.level,
       CASE WHEN COUNT(j.rank) > 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q
CROSS JOIN levels l
LEFT JOIN judged_ranking j
  ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.level = l.level
 AND j.stage = $stage AND j.rank <= $k AND j.gain > 0
WHERE q.run_id = $run_id AND q.answerable
GROUP BY q.query_id, l.level
