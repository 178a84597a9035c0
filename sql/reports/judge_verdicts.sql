-- The judge's verdicts on a run's kept claims, by verdict.
SELECT verdict, COUNT(*) AS n FROM claim_judgments WHERE run_id = $run_id GROUP BY verdict ORDER BY verdict
