-- Malformed lines of a qrels file read by qrels_lines.sql: their columns, their problem, and how many there are.
SELECT bad_fields, problem, COUNT(*) OVER () AS n_bad
FROM trec_qrels
WHERE problem IS NOT NULL
LIMIT $limit
