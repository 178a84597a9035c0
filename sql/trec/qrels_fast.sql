-- The fast path for a qrels file whose columns are separated by exactly one space (or exactly one
-- tab, $delim) and that holds no other blank: DuckDB's CSV reader parses it in parallel into the
-- columns assay.measures.trec_tables reads (fetched as Arrow; nothing is stored). As with run_fast.sql, an
-- empty column, a relevance that is not a whole number (qrels_lines.sql's own test: DuckDB's cast
-- alone would take 1.5 or 1e2) or a line of another width fails the statement, and the caller
-- falls back to the reference reading (qrels_lines.sql), which names the line.
SELECT hash(qid, docno) AS h, qid AS query_id, docno,
       CASE WHEN qid IS NULL OR iteration IS NULL OR docno IS NULL OR rel IS NULL
                 OR NOT regexp_full_match(rel, '[+-]?[0-9]+') OR TRY_CAST(rel AS INTEGER) IS NULL
            THEN error('not the fast path: an empty column or a relevance that is not a whole number')
            ELSE CAST(rel AS INTEGER) END AS grade
FROM read_csv($path, delim = $delim, header = false, auto_detect = false, quote = '', escape = '',
              strict_mode = true,
              columns = {'qid': 'VARCHAR', 'iteration': 'VARCHAR', 'docno': 'VARCHAR', 'rel': 'VARCHAR'})
