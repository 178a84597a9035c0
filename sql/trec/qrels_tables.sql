-- Qrels given as an Arrow table (query_id, docno, grade) in the columns the fast path (qrels_fast.sql) gives.
SELECT hash(query_id, docno) AS h, query_id, docno, grade
FROM (
    SELECT CAST(query_id AS VARCHAR) AS query_id, CAST(docno AS VARCHAR) AS docno, CAST(grade AS INTEGER) AS grade
    FROM _assay_qrels
)
