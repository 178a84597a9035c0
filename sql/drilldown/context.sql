-- The chunks one question's generator saw in run $run_id, in the order it saw them.
SELECT chunk_id FROM answer_context WHERE run_id = $run_id AND query_id = $query_id ORDER BY position
