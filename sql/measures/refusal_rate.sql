-- measure: refusal_rate
-- interval: wilson
-- cutoff: none
-- levels: answer
-- answerable_only: no
-- definition: share of no_answer questions whose answer refused (kept no claim)
--
-- refusal_rate: no_answer questions whose answer kept no claim (it refused, for whatever reason).
SELECT q.query_id, 'answer' AS level, CASE WHEN a.claims_kept = 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q
JOIN answers a ON a.run_id = q.run_id AND a.query_id = q.query_id
WHERE q.run_id = $run_id AND NOT q.answerable
