-- Runs comparable with a given run (same judgments and corpus), optionally of one pipeline, oldest first.
SELECT r.run_id, r.started_at, r.pipeline, r.config
FROM complete_runs r
JOIN complete_runs me ON me.run_id = $run_id
WHERE r.judgments_hash = me.judgments_hash AND r.corpus_hash = me.corpus_hash
  AND ($pipeline IS NULL OR r.pipeline = $pipeline)
ORDER BY r.started_at, r.run_id
