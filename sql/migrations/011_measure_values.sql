-- Per-question values in the warehouse, and views that BI tools read directly.
-- Portable SQL: plain tables, window functions, SQRT; no engine-specific functions.

-- Every value of every stored measure: one row per run, stage, level, measure and unit. Written with each
-- run (the default measures, at the final stage) by the same SQL as `assay report`; other measures and
-- older runs by `assay measures compute`. A run that failed or was blocked has none.
CREATE TABLE measure_values (
    run_id     VARCHAR NOT NULL,
    stage      VARCHAR NOT NULL,     -- the ranking scored: final, rerank, fusion, bm25, dense, external
    level      VARCHAR NOT NULL,     -- chunk | doc | query | answer
    query_id   VARCHAR NOT NULL,     -- the question the value is about
    measure    VARCHAR NOT NULL,     -- the registry's name: 'nDCG@10', 'AP', 'SpanRecall@1000tok'
    family     VARCHAR NOT NULL,     -- 'nDCG'
    cutoff     INTEGER,              -- @k, NULL when none
    budget     INTEGER,              -- @Ntok, NULL when none
    unit       VARCHAR NOT NULL,     -- the query_id, or 'query_id|claim|cite' for citation and claim measures
    value      DOUBLE  NOT NULL,
    PRIMARY KEY (run_id, stage, level, measure, unit)
);

-- What each stored measure is, written from the registry alongside its values.
CREATE TABLE measure_catalog (
    measure     VARCHAR PRIMARY KEY,
    family      VARCHAR NOT NULL,
    cutoff      INTEGER,
    budget      INTEGER,
    interval_kind VARCHAR NOT NULL,  -- wilson (values are 0/1) | bootstrap (graded values)
    unit_kind   VARCHAR NOT NULL,    -- question | citation | claim: what one value is about
    definition  VARCHAR NOT NULL
);

-- Per run, stage, level and measure: n, mean, min, max, and for 0/1 measures the continuity-corrected
-- Wilson score interval (95%), as `assay report` prints it. Graded measures' bootstrap intervals are in
-- `assay report` and `assay export`, not here (NULL).
CREATE VIEW measure_means AS
SELECT a.run_id, a.stage, a.level, a.measure, a.family, a.cutoff, a.budget, c.interval_kind, a.n, a.total,
       a.total / a.n AS mean, a.min_value, a.max_value,
       CASE WHEN COALESCE(c.interval_kind, '') <> 'wilson' THEN NULL
            WHEN a.total - 0.5 <= 0 THEN 0.0
            ELSE ((a.total - 0.5) / a.n + 3.841458820694124 / (2 * a.n)
                  - 1.959963984540054 * SQRT(((a.total - 0.5) / a.n) * (1 - (a.total - 0.5) / a.n) / a.n
                                             + 3.841458820694124 / (4.0 * a.n * a.n)))
                 / (1 + 3.841458820694124 / a.n)
       END AS wilson_low,
       CASE WHEN COALESCE(c.interval_kind, '') <> 'wilson' THEN NULL
            WHEN a.total + 0.5 >= a.n THEN 1.0
            ELSE ((a.total + 0.5) / a.n + 3.841458820694124 / (2 * a.n)
                  + 1.959963984540054 * SQRT(((a.total + 0.5) / a.n) * (1 - (a.total + 0.5) / a.n) / a.n
                                             + 3.841458820694124 / (4.0 * a.n * a.n)))
                 / (1 + 3.841458820694124 / a.n)
       END AS wilson_high
FROM (
    SELECT run_id, stage, level, measure, family, cutoff, budget,
           COUNT(*) AS n, SUM(value) AS total, MIN(value) AS min_value, MAX(value) AS max_value
    FROM measure_values
    GROUP BY run_id, stage, level, measure, family, cutoff, budget
) a
LEFT JOIN measure_catalog c ON c.measure = a.measure;

-- Per run, stage, level, measure and slice of the questions (category, form, hard_class): n and mean.
CREATE VIEW measure_slices AS
SELECT v.run_id, v.stage, v.level, v.measure, s.slice_field, s.slice_value,
       s.slice_field || '=' || s.slice_value AS slice,
       COUNT(*) AS n, AVG(v.value) AS mean
FROM measure_values v
JOIN (
    SELECT run_id, query_id, 'category' AS slice_field, category AS slice_value FROM eval_questions
    UNION ALL
    SELECT run_id, query_id, 'form' AS slice_field, form AS slice_value FROM eval_questions
    UNION ALL
    SELECT run_id, query_id, 'hard_class' AS slice_field, hard_class AS slice_value FROM eval_questions
) s ON s.run_id = v.run_id AND s.query_id = v.query_id
GROUP BY v.run_id, v.stage, v.level, v.measure, s.slice_field, s.slice_value;

-- Per run: where its answerable questions were lost, stage by stage in pipeline order (stages the pipeline
-- lacks are left out, stages that lost none show 0), with each step's share and the share still in play after it.
CREATE VIEW stage_rollup AS
WITH steps AS (
    SELECT 1 AS step, 'retrieval' AS lost_at, CAST(NULL AS VARCHAR) AS needs_stage
    UNION ALL SELECT 2, 'fusion', 'fusion'
    UNION ALL SELECT 3, 'rerank', 'rerank'
    UNION ALL SELECT 4, 'abstained', CAST(NULL AS VARCHAR)
    UNION ALL SELECT 5, 'cutoff', CAST(NULL AS VARCHAR)
    UNION ALL SELECT 6, 'found', CAST(NULL AS VARCHAR)
),
totals AS (
    SELECT run_id, COUNT(*) AS answerable FROM stage_attribution GROUP BY run_id
),
counts AS (
    SELECT run_id, lost_at, COUNT(*) AS n FROM stage_attribution GROUP BY run_id, lost_at
),
grid AS (
    SELECT t.run_id, t.answerable, s.step, s.lost_at, COALESCE(c.n, 0) AS n
    FROM totals t
    CROSS JOIN steps s
    LEFT JOIN counts c ON c.run_id = t.run_id AND c.lost_at = s.lost_at
    WHERE s.needs_stage IS NULL
       OR EXISTS (SELECT 1 FROM run_stages r WHERE r.run_id = t.run_id AND r.stage = s.needs_stage)
)
SELECT run_id, step, lost_at, n, answerable,
       n * 1.0 / answerable AS share,
       CASE WHEN lost_at = 'found' THEN NULL
            ELSE 1 - SUM(n) OVER (PARTITION BY run_id ORDER BY step ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                     * 1.0 / answerable
       END AS share_remaining
FROM grid;

-- One row per run (whatever its status): what it was, and its headline means at the final stage
-- (NULL: not stored for this run, e.g. a failed run, or no answer stage).
CREATE VIEW run_overview AS
WITH questions AS (
    SELECT run_id, COUNT(*) AS n_questions FROM run_queries GROUP BY run_id
),
answerable AS (
    SELECT run_id, SUM(CASE WHEN answerable THEN 1 ELSE 0 END) AS n_answerable FROM eval_questions GROUP BY run_id
),
means AS (
    SELECT run_id,
           AVG(CASE WHEN measure = 'Success@3' AND level = 'doc' THEN value END) AS success_at_3_doc,
           AVG(CASE WHEN measure = 'Success@10' AND level = 'chunk' THEN value END) AS success_at_10_chunk,
           AVG(CASE WHEN measure = 'R@10' AND level = 'chunk' THEN value END) AS recall_at_10_chunk,
           AVG(CASE WHEN measure = 'RR@10' AND level = 'doc' THEN value END) AS rr_at_10_doc,
           AVG(CASE WHEN measure = 'nDCG@10' AND level = 'chunk' THEN value END) AS ndcg_at_10_chunk,
           AVG(CASE WHEN measure = 'nDCG@10' AND level = 'doc' THEN value END) AS ndcg_at_10_doc,
           AVG(CASE WHEN measure = 'SpanRecall@1000tok' AND level = 'chunk' THEN value END) AS span_recall_at_1000tok,
           AVG(CASE WHEN measure = 'SpanPrecision@1000tok' AND level = 'chunk' THEN value END)
               AS span_precision_at_1000tok,
           AVG(CASE WHEN measure = 'FalseAbstain' THEN value END) AS false_abstain,
           AVG(CASE WHEN measure = 'answer_rate' THEN value END) AS answer_rate,
           AVG(CASE WHEN measure = 'faithfulness' THEN value END) AS faithfulness
    FROM measure_values
    WHERE stage = 'final'
    GROUP BY run_id
)
SELECT r.run_id, r.started_at, r.finished_at, r.status, r.kind, r.source_run_id, r.pipeline,
       cs.chunker, r.corpus_hash, COALESCE(co.name, co.root) AS corpus,
       r.judgments_hash, COALESCE(js.name, js.source_path) AS judgments,
       COALESCE(q.n_questions, 0) AS n_questions, a.n_answerable,
       m.success_at_3_doc, m.success_at_10_chunk, m.recall_at_10_chunk, m.rr_at_10_doc,
       m.ndcg_at_10_chunk, m.ndcg_at_10_doc, m.span_recall_at_1000tok, m.span_precision_at_1000tok,
       m.false_abstain, m.answer_rate, m.faithfulness
FROM runs r
LEFT JOIN chunk_sets cs ON cs.chunk_set = r.chunk_set
LEFT JOIN corpora co ON co.corpus_hash = r.corpus_hash
LEFT JOIN judgment_sets js ON js.judgments_hash = r.judgments_hash
LEFT JOIN questions q ON q.run_id = r.run_id
LEFT JOIN answerable a ON a.run_id = r.run_id
LEFT JOIN means m ON m.run_id = r.run_id;
