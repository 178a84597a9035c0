-- measure_means as 011 made it, but with the interval `assay report` prints since issue 25 (assay.measures.stats.wilson):
-- plain Wilson score interval from 25 questions on, continuity-corrected (Newcombe 1998) below. shift is the
-- correction, 0.5 below 25 questions and 0 from 25 on; z = 1.959963984540054, z^2 = 3.841458820694124.
CREATE OR REPLACE VIEW measure_means AS
SELECT a.run_id, a.stage, a.level, a.measure, a.family, a.cutoff, a.budget, c.interval_kind, a.n, a.total,
       a.total / a.n AS mean, a.min_value, a.max_value,
       CASE WHEN COALESCE(c.interval_kind, '') <> 'wilson' THEN NULL
            WHEN a.total - a.shift <= 0 THEN 0.0
            ELSE GREATEST(((a.total - a.shift) / a.n + 3.841458820694124 / (2 * a.n)
                  - 1.959963984540054 * SQRT(((a.total - a.shift) / a.n) * (1 - (a.total - a.shift) / a.n) / a.n
                                             + 3.841458820694124 / (4.0 * a.n * a.n)))
                 / (1 + 3.841458820694124 / a.n), 0.0)
       END AS wilson_low,
       CASE WHEN COALESCE(c.interval_kind, '') <> 'wilson' THEN NULL
            WHEN a.total + a.shift >= a.n THEN 1.0
            ELSE LEAST(((a.total + a.shift) / a.n + 3.841458820694124 / (2 * a.n)
                  + 1.959963984540054 * SQRT(((a.total + a.shift) / a.n) * (1 - (a.total + a.shift) / a.n) / a.n
                                             + 3.841458820694124 / (4.0 * a.n * a.n)))
                 / (1 + 3.841458820694124 / a.n), 1.0)
       END AS wilson_high
FROM (
    SELECT run_id, stage, level, measure, family, cutoff, budget,
           COUNT(*) AS n, SUM(value) AS total, MIN(value) AS min_value, MAX(value) AS max_value,
           CASE WHEN COUNT(*) < 25 THEN 0.5 ELSE 0.0 END AS shift
    FROM measure_values
    GROUP BY run_id, stage, level, measure, family, cutoff, budget
) a
LEFT JOIN measure_catalog c ON c.measure = a.measure;
