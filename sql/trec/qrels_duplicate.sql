-- The first (query, document) pair judged twice in the qrels, if any, among the pairs whose hash
-- is one of $hashes (qrels_hashes.sql): trec_eval refuses those too.
SELECT query_id, docno
FROM trec_qrels
WHERE hash(query_id, docno) IN (SELECT unnest($hashes))
GROUP BY query_id, docno
HAVING COUNT(*) > 1
ORDER BY query_id, docno
LIMIT 1
