-- The run a judgment set last resolved against (every stored run, whatever its status, resolved each gold
-- entry against its corpus): its id, corpus hash and where that corpus was read from. Parameter: judgments_hash.
SELECT r.run_id, r.corpus_hash, c.root
FROM runs r
LEFT JOIN corpora c ON c.corpus_hash = r.corpus_hash
WHERE r.judgments_hash = $judgments_hash
ORDER BY r.started_at DESC, r.run_id DESC
LIMIT 1
