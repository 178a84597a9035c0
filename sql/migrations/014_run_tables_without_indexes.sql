-- The tables every run adds rows to, without their primary-key indexes. A DuckDB primary key is an ART index
-- stored beside the table: on measure_values (about 38,000 rows a 1,000-question run) it took 20 times the
-- table's own bytes, and most of what a run added to the warehouse once hits were compact (migration 013).
-- Each key stays unique as the writes make it: a run's questions and stage latencies come one per question
-- (and stage) of its judgments, checked when the run is written; measure values are stored only for units
-- not stored yet (assay.measures.values). Columns, types and row order are unchanged.

CREATE TABLE run_queries_014 (
    run_id         VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    latency_ms     DOUBLE  NOT NULL,     -- wall time of the whole pipeline for this question
    n_results      INTEGER NOT NULL      -- hits in the final stage; 0 is abstention
);
INSERT INTO run_queries_014 SELECT run_id, query_id, latency_ms, n_results FROM run_queries ORDER BY rowid;
DROP TABLE run_queries;
ALTER TABLE run_queries_014 RENAME TO run_queries;

CREATE TABLE stage_latency_014 (
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    latency_ms    DOUBLE  NOT NULL
);
INSERT INTO stage_latency_014 SELECT run_id, query_id, stage, latency_ms FROM stage_latency ORDER BY rowid;
DROP TABLE stage_latency;
ALTER TABLE stage_latency_014 RENAME TO stage_latency;

CREATE TABLE measure_values_014 (
    run_id     VARCHAR NOT NULL,
    stage      VARCHAR NOT NULL,     -- the ranking scored: final, rerank, fusion, bm25, dense, external
    level      VARCHAR NOT NULL,     -- chunk | doc | query | answer
    query_id   VARCHAR NOT NULL,     -- the question the value is about
    measure    VARCHAR NOT NULL,     -- the registry's name: 'nDCG@10', 'AP', 'SpanRecall@1000tok'
    family     VARCHAR NOT NULL,     -- 'nDCG'
    cutoff     INTEGER,              -- @k, NULL when none
    budget     INTEGER,              -- @Ntok, NULL when none
    unit       VARCHAR NOT NULL,     -- the query_id, or 'query_id|claim|cite' for citation and claim measures
    value      DOUBLE  NOT NULL
);
INSERT INTO measure_values_014
SELECT run_id, stage, level, query_id, measure, family, cutoff, budget, unit, value FROM measure_values ORDER BY rowid;
DROP TABLE measure_values;
ALTER TABLE measure_values_014 RENAME TO measure_values;
