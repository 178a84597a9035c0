-- The first (query, document) pair judged twice in the qrels, if any: trec_eval refuses those too.
SELECT query_id, docno
FROM trec_qrels
GROUP BY query_id, docno
HAVING COUNT(*) > 1
ORDER BY query_id, docno
LIMIT 1
