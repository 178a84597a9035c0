-- The claims of one question's answer in run $run_id, each with its citations (one row per citation; a
-- claim without citations has one row whose cite_idx is NULL).
SELECT cl.claim_idx, cl.text, cl.kept, cl.reason, ci.cite_idx, ci.chunk_id, ci.quote, ci.valid,
       ci.reason AS cite_reason, ci.doc_id, ci.start_char, ci.end_char
FROM claims cl
LEFT JOIN citations ci
  ON ci.run_id = cl.run_id AND ci.query_id = cl.query_id AND ci.claim_idx = cl.claim_idx
WHERE cl.run_id = $run_id AND cl.query_id = $query_id
ORDER BY cl.claim_idx, ci.cite_idx
