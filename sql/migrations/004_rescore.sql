-- Rescoring: a run can be a new evaluation of an earlier run's stored hits against other judgments.
ALTER TABLE runs ADD COLUMN kind VARCHAR DEFAULT 'retrieval';   -- 'retrieval' | 'rescore'
ALTER TABLE runs ADD COLUMN source_run_id VARCHAR;               -- for a rescore: the run whose hits it reuses
