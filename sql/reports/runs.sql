-- Every complete run, newest first.
SELECT r.run_id, r.started_at, r.pipeline, r.config, r.corpus_hash, r.judgments_hash,
       (SELECT COUNT(*) FROM run_queries q WHERE q.run_id = r.run_id) AS n_questions
FROM complete_runs r
ORDER BY r.started_at DESC, r.run_id DESC
