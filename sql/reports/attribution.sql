-- One run's stage attribution in one pass over stage_attribution (the loss_funnel and fusion_effect views
-- read it too, each planned on its own): per place where answerable questions lost every gold passage, in
-- pipeline order, how many; with the questions fusion rescued (gold missing from one input list, kept) and
-- lost (in an input, cut by fusion), and how many had a fusion stage at all (none: the run had no fusion).
SELECT lost_at, COUNT(*) AS n,
       SUM(CASE WHEN in_fusion = 1 AND (in_bm25 = 0 OR in_dense = 0) THEN 1 ELSE 0 END) AS rescued,
       SUM(CASE WHEN in_fusion = 0 AND (in_bm25 = 1 OR in_dense = 1) THEN 1 ELSE 0 END) AS lost,
       COUNT(in_fusion) AS fused
FROM stage_attribution
WHERE run_id = $run_id
GROUP BY lost_at
ORDER BY CASE lost_at WHEN 'retrieval' THEN 1 WHEN 'fusion' THEN 2 WHEN 'rerank' THEN 3
                      WHEN 'abstained' THEN 4 WHEN 'cutoff' THEN 5 ELSE 6 END
