-- A run's stages in pipeline order, with the mean per-question latency of each.
SELECT s.stage, AVG(l.latency_ms) AS mean_latency_ms
FROM run_stages s
LEFT JOIN stage_latency l ON l.run_id = s.run_id AND l.stage = s.stage
WHERE s.run_id = $run_id
GROUP BY s.stage, s.position
ORDER BY s.position
