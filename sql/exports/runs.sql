-- Export `runs`: one run's identity, times, configuration and provenance. config and stats are JSON text.
SELECT r.run_id, r.started_at, r.finished_at, r.pipeline, r.config, r.config_hash, r.corpus_hash,
       r.judgments_hash, r.chunk_set, r.assay_version, r.git_commit, r.seed, r.tie_break, r.stats
FROM complete_runs r
WHERE r.run_id = $run_id
