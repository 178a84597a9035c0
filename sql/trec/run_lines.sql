-- A run file read line by line and split by trec_fields (macros.sql): the reference reading, and
-- the slow path, for files DuckDB's CSV reader cannot split on one separator (runs of blanks,
-- spaces and tabs mixed) and for those the fast path (run_fast.sql) gives up on. Blank lines are
-- skipped. A line that is not `query_id Q0 doc_id rank score tag` (six columns, a score that is a
-- number; Q0, rank and tag are not read) keeps its columns and its problem for run_problems.sql.
-- h: the 64-bit hash of (query, document), as run_fast.sql computes it.
CREATE TABLE trec_run AS
SELECT fields[1] AS query_id, fields[3] AS docno, hash(fields[1], fields[3]) AS h,
       TRY_CAST(fields[5] AS DOUBLE) AS score, problem,
       CASE WHEN problem IS NOT NULL THEN fields END AS bad_fields
FROM (
    SELECT fields,
           CASE WHEN len(fields) <> 6 THEN 'columns'
                WHEN TRY_CAST(fields[5] AS DOUBLE) IS NULL OR isnan(TRY_CAST(fields[5] AS DOUBLE)) THEN 'score'
           END AS problem
    FROM (
        SELECT trec_fields(line) AS fields
        FROM read_csv($path, columns = {'line': 'VARCHAR'}, delim = '', header = false, auto_detect = false,
                      quote = '', escape = '')
    )
    WHERE len(fields) > 0
)
