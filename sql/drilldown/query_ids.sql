-- The question ids of run $run_id, for suggesting the nearest ones to an id that is not among them.
SELECT query_id FROM eval_questions WHERE run_id = $run_id ORDER BY query_id
