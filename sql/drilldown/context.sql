-- The chunks the generator saw for question $query_id (NULL: every question) in run $run_id, in order.
SELECT query_id, chunk_id
FROM answer_context
WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
ORDER BY query_id, position
