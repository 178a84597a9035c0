-- Every name given to a run, by name: what `assay runs` shows beside each run.
SELECT n.name, n.run_id, n.named_at
FROM run_names n
ORDER BY n.name
