-- Malformed lines of a run read by run_lines.sql: their columns, their problem, and how many there are.
SELECT bad_fields, problem, COUNT(*) OVER () AS n_bad
FROM trec_run
WHERE problem IS NOT NULL
LIMIT $limit
