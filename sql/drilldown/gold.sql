-- The gold entries of question $query_id (NULL: every question) of run $run_id, resolved against the run's
-- corpus, in judgment order, with the pages they lie on (NULL in a document without pages).
SELECT g.query_id, g.gold_idx, g.doc_id, g.quote, g.grade, g.start_char, g.end_char, p.first_page, p.last_page
FROM complete_runs r
JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
LEFT JOIN gold_pages p ON p.judgments_hash = g.judgments_hash AND p.corpus_hash = g.corpus_hash
 AND p.query_id = g.query_id AND p.gold_idx = g.gold_idx
WHERE r.run_id = $run_id AND ($query_id IS NULL OR g.query_id = $query_id)
ORDER BY g.query_id, g.gold_idx
