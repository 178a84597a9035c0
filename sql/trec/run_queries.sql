-- The queries the run answers.
CREATE TABLE trec_run_queries AS
SELECT DISTINCT query_id
FROM trec_run
