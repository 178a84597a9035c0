-- Give run $run_id the name $run_name (a name not used yet: assay.store.run_refs.tag checks).
INSERT INTO run_names (name, run_id, named_at) VALUES ($run_name, $run_id, $named_at)
