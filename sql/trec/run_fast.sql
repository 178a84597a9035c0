-- The fast path for a run file whose columns are separated by exactly one space (or exactly one
-- tab, $delim) and that holds no other blank: DuckDB's CSV reader parses it in parallel, typed,
-- into the columns assay.measures.trec_ranking reads (fetched as Arrow; nothing is stored). The reader is
-- more lenient than the reference reading (run_lines.sql): a separator at the start or end of a
-- line, or two in a row, reads as an empty column, so a line of five columns and a blank can pass
-- as six. Any empty column, or a score that is not a number, fails the statement, as does a line
-- with too many or too few columns (the reader's own check); the caller then falls back to the
-- reference reading, which names the line. h is the 64-bit hash of (query, document), computed
-- here, in parallel, while the strings are at hand.
SELECT hash(qid, docno) AS h,
       CASE WHEN qid IS NULL OR q0 IS NULL OR docno IS NULL OR rank IS NULL OR tag IS NULL
                 OR score IS NULL OR isnan(score)
            THEN error('not the fast path: an empty column or a score that is not a number')
            ELSE score END AS score,
       qid AS query_id, docno
FROM read_csv($path, delim = $delim, header = false, auto_detect = false, quote = '', escape = '',
              strict_mode = true,
              columns = {'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docno': 'VARCHAR', 'rank': 'VARCHAR',
                         'score': 'DOUBLE', 'tag': 'VARCHAR'})
