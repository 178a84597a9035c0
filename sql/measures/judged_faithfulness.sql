-- measure: judged_faithfulness
-- interval: wilson
-- cutoff: none
-- levels: answer
-- answerable_only: no
-- unit: claim
-- definition: share of kept claims a judge model (never the generator's) found supported by their quotes
--
-- judged_faithfulness: kept claims the judge model found supported by their quotes, among the claims
-- it judged (an unavailable or unreadable verdict is left out and counted in the report, never guessed).
SELECT j.query_id, 'answer' AS level, CASE WHEN j.verdict = 'supported' THEN 1.0 ELSE 0.0 END AS value,
       j.query_id || '|' || CAST(j.claim_idx AS VARCHAR) AS unit
FROM claim_judgments j
WHERE j.run_id = $run_id AND j.verdict IN ('supported', 'unsupported')
