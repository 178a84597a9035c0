-- The run a name names (run_names), with its status and pipeline; no row when the name is not given to any run.
SELECT n.run_id, r.status, r.pipeline
FROM run_names n
LEFT JOIN runs r ON r.run_id = n.run_id
WHERE n.name = $run_name
