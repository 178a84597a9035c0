-- The stored values of one measure at one stage and level for a pipeline's complete runs: one row per run, its
-- values in unit order (DuckDB compares strings by their bytes, as Python does).
SELECT m.run_id, ARRAY_AGG(m.value ORDER BY m.unit) AS vals
FROM measure_values m
JOIN complete_runs r ON r.run_id = m.run_id
WHERE r.pipeline = $pipeline AND m.measure = $measure AND m.stage = $stage AND m.level = $level
GROUP BY m.run_id
