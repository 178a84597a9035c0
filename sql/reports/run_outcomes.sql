-- Every run whose id starts with $prefix ('' for all), whatever its status, newest first: what `latest`
-- means for gate and regress, and why a run did not complete (stats.outcome, written by the runner).
SELECT r.run_id, r.started_at, r.status, r.stats, r.pipeline, r.judgments_hash, r.corpus_hash
FROM runs r
WHERE substr(r.run_id, 1, length($prefix)) = $prefix
ORDER BY r.started_at DESC, r.run_id DESC
