-- Move the name $run_name to run $run_id (`assay tag --force`).
UPDATE run_names SET run_id = $run_id, named_at = $named_at WHERE name = $run_name
