-- The hits of run $run_id for question $query_id (NULL: every question) in every stage: the top $depth of
-- each stage, and the stage's first hit overlapping a gold span when it ranks below that. Each with its
-- chunk's span and text (a whole document and an external retriever's span are chunks of the run's chunk
-- set too), its best gold grade (NULL when it overlaps no gold span), whether it lies below the depth, and
-- the pages it lies on (NULL in a document without pages).
WITH hit_golds AS (
    SELECT query_id, stage, rank, grade
    FROM chunk_gold_overlaps
    WHERE run_id = $run_id AND ($query_id IS NULL OR query_id = $query_id)
), first_relevant AS (
    SELECT query_id, stage, MIN(rank) AS rank FROM hit_golds GROUP BY query_id, stage
), grades AS (
    SELECT query_id, stage, rank, MAX(grade) AS grade FROM hit_golds GROUP BY query_id, stage, rank
)
SELECT h.query_id, h.stage, h.rank, h.chunk_id, h.doc_id, h.score, c.start_char, c.end_char, c.text, g.grade,
       h.rank > $depth AS beyond_depth, p.first_page, p.last_page
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
LEFT JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
LEFT JOIN chunk_pages p ON p.chunk_set = r.chunk_set AND p.chunk_id = h.chunk_id
LEFT JOIN grades g ON g.query_id = h.query_id AND g.stage = h.stage AND g.rank = h.rank
LEFT JOIN first_relevant f ON f.query_id = h.query_id AND f.stage = h.stage
WHERE h.run_id = $run_id AND ($query_id IS NULL OR h.query_id = $query_id)
  AND (h.rank <= $depth OR h.rank = f.rank)
ORDER BY h.query_id, h.stage, h.rank
