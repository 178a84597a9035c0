-- The 64-bit hash of every judged (query, document) pair, for the duplicate check (equal hashes
-- found by sorting them; qrels_duplicate.sql then checks those pairs on the strings).
SELECT hash(query_id, docno) AS h
FROM trec_qrels
