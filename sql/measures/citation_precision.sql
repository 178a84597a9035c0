-- measure: citation_precision
-- interval: wilson
-- cutoff: none
-- levels: answer
-- answerable_only: no
-- unit: citation
-- definition: rule-based: share of citations (of kept claims) whose chunk overlaps a gold span
--
-- citation_precision (rule-based): citations of kept claims that point at a chunk overlapping a gold
-- span of the question. The unit is the citation; a no_answer question has no gold, so its citations miss.
SELECT c.query_id, 'answer' AS level,
       CASE WHEN EXISTS (
           SELECT 1 FROM gold_spans g
           WHERE g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
             AND g.query_id = c.query_id AND g.doc_id = ch.doc_id
             AND ch.start_char < g.end_char AND g.start_char < ch.end_char
       ) THEN 1.0 ELSE 0.0 END AS value,
       c.query_id || '|' || CAST(c.claim_idx AS VARCHAR) || '|' || CAST(c.cite_idx AS VARCHAR) AS unit
FROM citations c
JOIN claims k ON k.run_id = c.run_id AND k.query_id = c.query_id AND k.claim_idx = c.claim_idx AND k.kept
JOIN complete_runs r ON r.run_id = c.run_id
JOIN chunks ch ON ch.chunk_set = r.chunk_set AND ch.chunk_id = c.chunk_id
WHERE c.run_id = $run_id
