-- Hashes of (query, document) pairs that may appear twice in the run: equal neighbours once the
-- 64-bit hashes h = hash(query_id, docno), stored by the reading, are sorted: much faster than
-- grouping ten million string pairs. A collision of two different pairs is possible, so
-- run_duplicate.sql checks the candidates on the strings.
SELECT DISTINCT h
FROM (
    SELECT h, lag(h) OVER (ORDER BY h) AS previous
    FROM trec_run
)
WHERE h = previous
LIMIT $limit
