-- Take the name $run_name off its run (`assay tag --delete`); the run itself is kept.
DELETE FROM run_names WHERE name = $run_name
