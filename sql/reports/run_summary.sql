-- One run's header for reports: identity, configuration and sizes. Joins and one aggregate, not a subquery
-- per figure: each correlated subquery is planned on its own, and planning is most of this query's time.
SELECT r.run_id, r.started_at, r.finished_at, r.status, r.pipeline, r.config, r.config_hash,
       r.corpus_hash, r.judgments_hash, r.chunk_set, r.assay_version, r.versions, r.git_commit,
       r.seed, r.tie_break, r.stats, c.n_documents, s.n_chunks, q.n_questions, q.n_answerable
FROM complete_runs r
LEFT JOIN corpora c ON c.corpus_hash = r.corpus_hash
LEFT JOIN chunk_sets s ON s.chunk_set = r.chunk_set
CROSS JOIN (SELECT COUNT(*) AS n_questions, COUNT(CASE WHEN answerable THEN 1 END) AS n_answerable
            FROM eval_questions WHERE run_id = $run_id) q
WHERE r.run_id = $run_id
