-- Every question of run $run_id, one row each in query_id order: its labels, how the final list did
-- (the rank of the first hit overlapping a gold span, chunk level; of the first gold document, document
-- level) and where it was lost. NULL where a value does not apply: the successes and ranks of a question without
-- gold. Its answer is read apart (drilldown/question_answers), only for a run that has answers.
WITH firsts AS (
    SELECT query_id, level, MIN(rank) AS first_rank
    FROM judged_ranking
    WHERE run_id = $run_id AND stage = 'final' AND gain > 0
    GROUP BY query_id, level
)
SELECT q.query_id, q.query_text, q.category, q.form, q.hard_class, q.unanswerable, q.answerable,
       q.n_results, q.latency_ms,
       CASE WHEN NOT q.answerable THEN NULL WHEN fd.first_rank <= 3 THEN 1 ELSE 0 END AS success_doc_3,
       CASE WHEN NOT q.answerable THEN NULL WHEN fc.first_rank <= 10 THEN 1 ELSE 0 END AS success_chunk_10,
       fc.first_rank AS first_rank_chunk,
       fd.first_rank AS first_rank_doc,
       a.lost_at
FROM eval_questions q
LEFT JOIN firsts fc ON fc.query_id = q.query_id AND fc.level = 'chunk'
LEFT JOIN firsts fd ON fd.query_id = q.query_id AND fd.level = 'doc'
LEFT JOIN stage_attribution a ON a.run_id = q.run_id AND a.query_id = q.query_id
WHERE q.run_id = $run_id
ORDER BY q.query_id
