-- Export `gold_spans`: one row per gold entry of each question of one run (its judgments resolved against its
-- corpus): the span [start_char, end_char) of the document's text, the grade, and the quote (NULL: the whole
-- document). gold_idx is the entry's place in the question's gold list, the chunk-level unit the metrics credit.
SELECT r.run_id, g.query_id, g.gold_idx, g.doc_id, g.start_char, g.end_char, g.grade, g.quote
FROM runs r
JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
WHERE r.run_id = $run_id
ORDER BY g.query_id, g.gold_idx
