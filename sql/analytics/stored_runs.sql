-- The pipeline's complete runs that hold stored values of a measure at a stage (at any level).
SELECT DISTINCT m.run_id
FROM measure_values m
JOIN complete_runs r ON r.run_id = m.run_id
WHERE r.pipeline = $pipeline AND m.measure = $measure AND m.stage = $stage
