-- A pipeline's complete runs with what a history needs of each (the order is Python's: started_at, run_id), and
-- what each is: kind (retrieval, rescore, revalidate), the sweep it was a point of, the ablation it was a rung of
-- (`assay ablate` writes it into the run's stats).
SELECT run_id, started_at, judgments_hash, corpus_hash, seed, kind, sweep_id,
       json_extract_string(stats, '$.ablation.ablation_id') AS ablation_id
FROM complete_runs
WHERE pipeline = $pipeline
