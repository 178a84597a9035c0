-- An external retriever's list is a first-stage list too ('external'), for stage attribution.
CREATE OR REPLACE VIEW stage_attribution AS
SELECT run_id, query_id,
       MAX(CASE WHEN stage = 'bm25' THEN present END) AS in_bm25,
       MAX(CASE WHEN stage = 'dense' THEN present END) AS in_dense,
       MAX(CASE WHEN stage = 'fusion' THEN present END) AS in_fusion,
       MAX(CASE WHEN stage = 'rerank' THEN present END) AS in_rerank,
       MAX(CASE WHEN stage = 'final' THEN present END) AS in_final,
       CASE
           WHEN MAX(CASE WHEN stage = 'final' THEN present END) = 1 THEN 'found'
           WHEN COALESCE(MAX(CASE WHEN stage IN ('bm25', 'dense', 'external') THEN present END), 0) = 0 THEN 'retrieval'
           WHEN MAX(CASE WHEN stage = 'fusion' THEN present END) = 0 THEN 'fusion'
           WHEN MAX(CASE WHEN stage = 'rerank' THEN present END) = 0 THEN 'rerank'
           WHEN MAX(n_results) = 0 THEN 'abstained'
           ELSE 'cutoff'
       END AS lost_at
FROM stage_presence
GROUP BY run_id, query_id;
