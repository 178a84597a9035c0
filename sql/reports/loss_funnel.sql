-- One run's loss funnel: where answerable questions lost every gold passage, in pipeline order.
SELECT lost_at, n FROM loss_funnel WHERE run_id = $run_id
ORDER BY CASE lost_at WHEN 'retrieval' THEN 1 WHEN 'fusion' THEN 2 WHEN 'rerank' THEN 3
                      WHEN 'abstained' THEN 4 WHEN 'cutoff' THEN 5 ELSE 6 END
