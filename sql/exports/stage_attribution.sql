-- Export `stage_attribution`: the view of the same name for one run (answerable questions only).
SELECT a.run_id, a.query_id, a.in_bm25, a.in_dense, a.in_fusion, a.in_rerank, a.in_final, a.lost_at
FROM stage_attribution a
WHERE a.run_id = $run_id
ORDER BY a.query_id
