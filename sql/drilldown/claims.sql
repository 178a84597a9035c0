-- The claims of the answer to question $query_id (NULL: every question) in run $run_id, each with its
-- citations (one row per citation; a claim without citations has one row whose cite_idx is NULL).
SELECT cl.query_id, cl.claim_idx, cl.text, cl.kept, cl.reason, ci.cite_idx, ci.chunk_id, ci.quote, ci.valid,
       ci.reason AS cite_reason, ci.doc_id, ci.start_char, ci.end_char
FROM claims cl
LEFT JOIN citations ci
  ON ci.run_id = cl.run_id AND ci.query_id = cl.query_id AND ci.claim_idx = cl.claim_idx
WHERE cl.run_id = $run_id AND ($query_id IS NULL OR cl.query_id = $query_id)
ORDER BY cl.query_id, cl.claim_idx, ci.cite_idx
