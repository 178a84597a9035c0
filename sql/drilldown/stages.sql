-- The stages of run $run_id in pipeline order (final last) for one question: its latency there (mean of
-- the stored values), how many hits the stage returned, and the rank of its first hit overlapping a gold span.
SELECT s.stage, s.position,
       (SELECT AVG(l.latency_ms) FROM stage_latency l
        WHERE l.run_id = s.run_id AND l.query_id = $query_id AND l.stage = s.stage) AS latency_ms,
       (SELECT COUNT(*) FROM hits h
        WHERE h.run_id = s.run_id AND h.query_id = $query_id AND h.stage = s.stage) AS n_hits,
       (SELECT MIN(o.rank) FROM chunk_gold_overlaps o
        WHERE o.run_id = s.run_id AND o.query_id = $query_id AND o.stage = s.stage) AS first_relevant_rank
FROM run_stages s
WHERE s.run_id = $run_id
ORDER BY CASE WHEN s.stage = 'final' THEN 1 ELSE 0 END, s.position
