-- Export `runs`: one run's identity, times, configuration and provenance, its status (complete, failed, blocked)
-- and kind (run, rescore, revalidate; source_run_id: the run a rescore or revalidation reuses). config and stats
-- are JSON text. Any status: the caller decides which runs are exported.
SELECT r.run_id, r.started_at, r.finished_at, r.pipeline, r.config, r.config_hash, r.corpus_hash,
       r.judgments_hash, r.chunk_set, r.assay_version, r.git_commit, r.seed, r.tie_break, r.stats,
       r.status, r.kind, r.source_run_id
FROM runs r
WHERE r.run_id = $run_id
