-- Where answerable questions were lost, through the answer stage.
SELECT lost_at, COUNT(*) AS n FROM answer_attribution WHERE run_id = $run_id GROUP BY lost_at ORDER BY lost_at
