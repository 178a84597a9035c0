-- Qrels read by the reference reading (qrels_lines.sql, once its lines are known to be well formed)
-- in the columns the fast path (qrels_fast.sql) gives.
SELECT hash(query_id, docno) AS h, query_id, docno, grade
FROM trec_qrels
