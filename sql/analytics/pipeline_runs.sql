-- A pipeline's complete runs with what a history needs of each (the order is Python's: started_at, run_id).
SELECT run_id, started_at, judgments_hash, corpus_hash, seed
FROM complete_runs
WHERE pipeline = $pipeline
