-- A run read by the reference reading (run_lines.sql, once its lines are known to be well formed) in
-- the columns the fast path (run_fast.sql) gives.
SELECT h, score, query_id, docno
FROM trec_run
