-- measure: Abstain
-- interval: wilson
-- cutoff: none
-- levels: query
-- answerable_only: no
-- definition: share of no_answer questions for which the pipeline returned nothing
--
-- measure: FalseAbstain
-- interval: wilson
-- cutoff: none
-- levels: query
-- definition: share of answerable questions for which the pipeline wrongly returned nothing
--
-- Abstention, per question: did the final stage return nothing?
-- For no_answer questions returning nothing is right; for answerable ones it is a wrong abstention.
SELECT q.query_id, q.answerable,
       CASE WHEN q.n_results = 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q
WHERE q.run_id = $run_id
