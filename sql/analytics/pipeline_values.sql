-- The stored values of one measure at one stage and level for a pipeline's complete runs.
SELECT m.run_id, m.unit, m.value
FROM measure_values m
JOIN complete_runs r ON r.run_id = m.run_id
WHERE r.pipeline = $pipeline AND m.measure = $measure AND m.stage = $stage AND m.level = $level
