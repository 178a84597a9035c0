-- Every run, newest first; runs that did not complete (status 'failed' or 'blocked') are listed with their status.
-- kind: 'retrieval', 'rescore' or 'revalidate'; source_run_id: the run a rescore or revalidation reuses.
SELECT r.run_id, r.started_at, r.pipeline, r.config, r.corpus_hash, r.judgments_hash,
       (SELECT COUNT(*) FROM run_queries q WHERE q.run_id = r.run_id) AS n_questions, r.status,
       r.kind, r.source_run_id
FROM runs r
ORDER BY r.started_at DESC, r.run_id DESC
