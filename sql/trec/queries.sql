-- The queries evaluated, chosen as trec_eval chooses them: every query of the qrels that the run
-- answers, one without any relevant document included (it scores 0); with $complete (trec_eval -c)
-- every query of the qrels, those the run lacks scoring 0.
CREATE TABLE trec_queries AS
SELECT qcode
FROM trec_query_codes
WHERE $complete OR qcode IN (SELECT qcode FROM trec_run_queries)
