-- The gold entries of question $query_id (NULL: every question) of run $run_id, resolved against the run's
-- corpus, in judgment order.
SELECT g.query_id, g.gold_idx, g.doc_id, g.quote, g.grade, g.start_char, g.end_char
FROM complete_runs r
JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
WHERE r.run_id = $run_id AND ($query_id IS NULL OR g.query_id = $query_id)
ORDER BY g.query_id, g.gold_idx
