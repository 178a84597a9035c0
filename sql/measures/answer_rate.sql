-- measure: answer_rate
-- interval: wilson
-- cutoff: none
-- levels: answer
-- definition: share of answerable questions whose answer kept at least one valid claim
--
-- answer_rate: answerable questions whose answer kept at least one valid claim.
SELECT q.query_id, 'answer' AS level, CASE WHEN a.claims_kept > 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q
JOIN answers a ON a.run_id = q.run_id AND a.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
