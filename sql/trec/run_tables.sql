-- A run given as an Arrow table (query_id, docno, score) in the columns the fast path (run_fast.sql) gives.
SELECT hash(query_id, docno) AS h, score, query_id, docno
FROM (
    SELECT CAST(query_id AS VARCHAR) AS query_id, CAST(docno AS VARCHAR) AS docno, CAST(score AS DOUBLE) AS score
    FROM _assay_run
)
