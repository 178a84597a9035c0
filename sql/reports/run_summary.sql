-- One run's header for reports: identity, configuration, sizes and latency.
SELECT r.run_id, r.started_at, r.finished_at, r.status, r.pipeline, r.config, r.config_hash,
       r.corpus_hash, r.judgments_hash, r.chunk_set, r.assay_version, r.versions, r.git_commit,
       r.seed, r.tie_break, r.stats,
       (SELECT n_documents FROM corpora c WHERE c.corpus_hash = r.corpus_hash) AS n_documents,
       (SELECT n_chunks FROM chunk_sets s WHERE s.chunk_set = r.chunk_set) AS n_chunks,
       (SELECT COUNT(*) FROM eval_questions q WHERE q.run_id = r.run_id) AS n_questions,
       (SELECT COUNT(*) FROM eval_questions q WHERE q.run_id = r.run_id AND q.answerable) AS n_answerable,
       (SELECT SUM(latency_ms) FROM run_queries q WHERE q.run_id = r.run_id) AS total_latency_ms
FROM complete_runs r
WHERE r.run_id = $run_id
