-- measure: faithfulness
-- interval: wilson
-- cutoff: none
-- levels: answer
-- answerable_only: no
-- unit: claim
-- definition: rule-based: share of kept claims whose every citation quotes text overlapping a gold span
--
-- faithfulness (rule-based): kept claims every citation of which quotes text overlapping a gold span
-- of the question (so the chunk is gold too). The unit is the claim.
SELECT k.query_id, 'answer' AS level,
       CASE WHEN MIN(CASE WHEN EXISTS (
           SELECT 1 FROM gold_spans g
           WHERE g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
             AND g.query_id = c.query_id AND g.doc_id = c.doc_id
             AND c.start_char < g.end_char AND g.start_char < c.end_char
       ) THEN 1 ELSE 0 END) = 1 THEN 1.0 ELSE 0.0 END AS value,
       k.query_id || '|' || CAST(k.claim_idx AS VARCHAR) AS unit
FROM claims k
JOIN citations c ON c.run_id = k.run_id AND c.query_id = k.query_id AND c.claim_idx = k.claim_idx
JOIN complete_runs r ON r.run_id = k.run_id
WHERE k.run_id = $run_id AND k.kept
GROUP BY k.query_id, k.claim_idx, r.judgments_hash, r.corpus_hash
