-- Every run, newest first, whatever its status: what `latest`, `latest~N` and `previous` count back through
-- (assay.store.run_refs; only the complete ones where a command needs metrics).
SELECT r.run_id, r.status, r.pipeline
FROM runs r
ORDER BY r.started_at DESC, r.run_id DESC
