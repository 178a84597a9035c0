-- A qrels file read line by line and split by trec_fields (macros.sql), the reference reading
-- (qrels files are small: they always take it). Blank lines are skipped. A line that is not
-- `query_id iteration doc_id relevance` (four columns, a whole-number relevance) keeps its
-- columns and its problem for qrels_problems.sql.
CREATE TABLE trec_qrels AS
SELECT fields[1] AS query_id, fields[3] AS docno, TRY_CAST(fields[4] AS INTEGER) AS grade, problem,
       CASE WHEN problem IS NOT NULL THEN fields END AS bad_fields
FROM (
    SELECT fields,
           CASE WHEN len(fields) <> 4 THEN 'columns'
                WHEN NOT regexp_full_match(fields[4], '[+-]?[0-9]+') OR TRY_CAST(fields[4] AS INTEGER) IS NULL
                THEN 'relevance'
           END AS problem
    FROM (
        SELECT trec_fields(line) AS fields
        FROM read_csv($path, columns = {'line': 'VARCHAR'}, delim = '', header = false, auto_detect = false,
                      quote = '', escape = '')
    )
    WHERE len(fields) > 0
)
