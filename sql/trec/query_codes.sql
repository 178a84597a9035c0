-- Every query of the qrels gets a code, 0, 1, ... in query id order: the ranking
-- (assay.trec_ranking) and the tables the measures read (measure_views.sql) name a query by its
-- code, which joins, groups and sorts faster than the string.
--
-- trec_relevant: the relevant judgments (relevance >= 1), numbered in the order of h, the 64-bit
-- hash of (query, document) as the run's reading computes it; the ranking finds them in the run by h.
CREATE TABLE trec_query_codes AS
SELECT query_id, (ROW_NUMBER() OVER (ORDER BY query_id) - 1)::INTEGER AS qcode
FROM (SELECT DISTINCT query_id FROM trec_qrels);

CREATE TABLE trec_relevant AS
SELECT (ROW_NUMBER() OVER (ORDER BY r.h) - 1)::BIGINT AS rel_id, c.qcode, r.query_id, r.docno, r.grade, r.h
FROM (SELECT query_id, docno, grade, hash(query_id, docno) AS h FROM trec_qrels WHERE grade >= 1) r
JOIN trec_query_codes c ON c.query_id = r.query_id;
