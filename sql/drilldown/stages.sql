-- The stages of run $run_id in pipeline order (final last) for question $query_id (NULL: every question):
-- its latency there (mean of the stored values), how many hits the stage returned for it, and the rank of
-- its first hit overlapping a gold span. A run recorded before run_stages existed has its stages from its hits.
WITH run_stage AS (
    SELECT stage, position FROM run_stages WHERE run_id = $run_id
    UNION ALL
    SELECT DISTINCT h.stage, CAST(NULL AS INTEGER) AS position
    FROM hits h
    WHERE h.run_id = $run_id AND NOT EXISTS (SELECT 1 FROM run_stages s WHERE s.run_id = h.run_id)
), latency AS (
    SELECT query_id, stage, AVG(latency_ms) AS latency_ms
    FROM stage_latency
    WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
    GROUP BY query_id, stage
), counts AS (
    SELECT query_id, stage, COUNT(*) AS n_hits
    FROM hits
    WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
    GROUP BY query_id, stage
), firsts AS (
    SELECT query_id, stage, MIN(rank) AS first_relevant_rank
    FROM chunk_gold_overlaps
    WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
    GROUP BY query_id, stage
)
SELECT q.query_id, s.stage, s.position, l.latency_ms, COALESCE(n.n_hits, 0) AS n_hits, f.first_relevant_rank
FROM run_stage s
JOIN eval_questions q ON q.run_id = $run_id
LEFT JOIN latency l ON l.query_id = q.query_id AND l.stage = s.stage
LEFT JOIN counts n ON n.query_id = q.query_id AND n.stage = s.stage
LEFT JOIN firsts f ON f.query_id = q.query_id AND f.stage = s.stage
WHERE $query_id IS NULL OR q.query_id = $query_id
ORDER BY q.query_id, CASE WHEN s.stage = 'final' THEN 1 ELSE 0 END, s.position, s.stage
